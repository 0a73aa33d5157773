import t, { type Test } from 'tap';
import pino from 'pino';
import { startServer, type TestServer } from '../helpers/server.js';
import { ok, noContent } from '../../src/http/reply.js';
import { conflict, notFound } from '../../src/lib/errors.js';
import { actorLockKey, ActorRuntime, type RuntimeOptions, type SnapshotStore } from '../../src/runtime/runtime.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { runHolding } from '../../src/runtime/holding.js';
import type { KeyLocks } from '../../src/runtime/locks.js';
import { manualClock } from '../../src/lib/clock.js';
import type { Deps } from '../../src/deps.js';
import type { Route } from '../../src/http/route.js';
import { testMachines, type DoorContext } from './door-machine.js';
import { Actor, setup } from 'xstate';

const doorKey = (id: string) => actorLockKey('door', [id]);

/** A runtime of door machines over `store` (100 residents of 1 GiB in all, a minute's idle time unless `options` say otherwise), stopped with the store closed when `t` ends. */
function runtimeOver(t: Test, store: Store, options: Partial<RuntimeOptions> = {}): ActorRuntime {
  const runtime = new ActorRuntime({
    store,
    machines: testMachines,
    clock: manualClock(),
    logger: pino({ level: 'silent' }),
    maxActors: 100,
    maxActorBytes: 1 << 30,
    idleMs: 60_000,
    ...options,
  });
  t.teardown(async () => {
    runtime.stop();
    await store.close();
  });
  return runtime;
}

/** Probe routes that drive the runtime the way feature routes do. */
function doorRoutes({ runtime, store }: Deps): Route[] {
  const names = store.db<string>('door_names');
  const views = store.db<string>('door_views');
  return [
    {
      method: 'POST',
      path: '/test/doors/:id',
      async handle(ctx) {
        const { name } = (ctx.body as { value: { name: string } }).value;
        const { id } = ctx.params;
        return ok(
          await runtime.run([doorKey(id), `door-name:${name}`], (turn) => {
            if (turn.get('door', [id]) || names.get([name])) throw conflict('E_DOOR_EXISTS', 'door exists');
            const view = turn.create<DoorContext>('door', [id], { name });
            turn.put(names, [name], id);
            turn.count(['doors'], 1);
            return view;
          }),
        );
      },
    },
    {
      method: 'GET',
      path: '/test/doors/:id',
      handle(ctx) {
        const view = runtime.read<DoorContext>('door', [ctx.params.id]);
        if (!view) throw notFound('door', ctx.params.id);
        return ok(view);
      },
    },
    {
      method: 'DELETE',
      path: '/test/doors/:id',
      async handle(ctx) {
        const { id } = ctx.params;
        await runtime.run([doorKey(id)], (turn) => {
          const view = turn.get<DoorContext>('door', [id]);
          if (!view) throw notFound('door', id);
          turn.remove('door', [id]);
          turn.del(names, [view.context.name]);
          turn.count(['doors'], -1);
        });
        return noContent();
      },
    },
    {
      method: 'POST',
      path: '/test/doors/:id/:event',
      handle: async (ctx) =>
        ok(await runtime.run([doorKey(ctx.params.id)], (turn) => turn.send('door', [ctx.params.id], { type: `door.${ctx.params.event}` }))),
    },
    {
      // One turn moving two doors: the multi-actor case (accepting an invite moves invite and member).
      method: 'POST',
      path: '/test/pairs/:a/:b/:event',
      query: 'parsed',
      async handle(ctx) {
        const { a, b, event } = ctx.params;
        const failDerive = ctx.query().get('fail') === 'derive';
        return ok(
          await runtime.run([doorKey(a), doorKey(b)], (turn) => {
            const first = turn.send<DoorContext>('door', [a], { type: `door.${event}` });
            const second = turn.send<DoorContext>('door', [b], { type: `door.${event}` });
            turn.count(['pair-events'], 1);
            turn.derive(() => {
              if (failDerive) throw new Error('read model failed');
              views.put([a], `${first.state}+${second.state}`);
            });
            return [first, second];
          }),
        );
      },
    },
  ];
}

async function openDoorServer(t: Parameters<typeof startServer>[0], dataDir?: string): Promise<TestServer> {
  return startServer(t, { machines: testMachines, extraRoutes: doorRoutes, dataDir });
}

/** Everything the probe routes may write, read raw from LMDB. */
function stored(server: TestServer, ids: string[]) {
  const { runtime, store } = server.deps;
  return {
    snapshots: ids.map((id) => runtime.table('door').get([id]) ?? null),
    names: [...store.db('door_names').getRange({})],
    views: [...store.db('door_views').getRange({})],
    doors: runtime.counter(['doors']),
    pairEvents: runtime.counter(['pair-events']),
  };
}

t.test('a refused event answers 409 naming state and event, and writes nothing', async (t) => {
  const server = await openDoorServer(t);
  t.equal((await server.request('POST', '/test/doors/d1', { body: { name: 'front' } })).status, 200);
  t.equal((await server.request('POST', '/test/doors/d1/open')).status, 200);
  const before = stored(server, ['d1']);
  const refused = await server.request('POST', '/test/doors/d1/lock');
  t.equal(refused.status, 409);
  t.equal(refused.body.code, 'E_INVALID_STATE_TRANSITION');
  t.match(refused.body.message, /door\.lock/);
  t.match(refused.body.message, /open/);
  t.same(stored(server, ['d1']), before, 'nothing written');
  const view = await server.request('GET', '/test/doors/d1');
  t.same(view.body, { state: 'open', context: { name: 'front', opens: 1, knocks: 0 } });
  t.equal((await server.request('POST', '/test/doors/nope/open')).body.code, 'E_DOOR_NOT_FOUND');
});

t.test('a multi-actor turn is all-or-nothing', async (t) => {
  const server = await openDoorServer(t);
  await server.request('POST', '/test/doors/a', { body: { name: 'a' } });
  await server.request('POST', '/test/doors/b', { body: { name: 'b' } });
  await server.request('POST', '/test/doors/b/lock');

  t.test('when the second actor refuses', async (t) => {
    const before = stored(server, ['a', 'b']);
    const res = await server.request('POST', '/test/pairs/a/b/open');
    t.equal(res.status, 409);
    t.same(stored(server, ['a', 'b']), before, 'the first actor was not written either');
    // Had the refused turn left `a` open in memory, closing it would succeed and locking would fail.
    t.equal((await server.request('POST', '/test/doors/a/close')).status, 409, 'a is still closed in memory');
    t.equal((await server.request('POST', '/test/doors/a/lock')).status, 200);
    t.equal((await server.request('POST', '/test/doors/a/unlock')).status, 200);
  });

  t.test('when a derive fails inside the commit', async (t) => {
    await server.request('POST', '/test/doors/b/unlock');
    const before = stored(server, ['a', 'b']);
    const res = await server.request('POST', '/test/pairs/a/b/open?fail=derive');
    t.equal(res.status, 503);
    t.equal(res.body.code, 'E_UNAVAILABLE');
    t.equal(res.headers.get('retry-after'), '1', 'the same request may be sent again');
    t.notMatch(res.text, /read model failed/, 'internals are not echoed');
    t.same(stored(server, ['a', 'b']), before, 'no snapshot, counter or read model written');
    const after = await server.request('POST', '/test/pairs/a/b/open');
    t.equal(after.status, 200, 'both actors reloaded from disk and accept the event again');
    t.same(
      after.body.map((v: { state: string; context: DoorContext }) => [v.state, v.context.opens]),
      [
        ['open', 1],
        ['open', 1],
      ],
    );
    t.equal(server.deps.runtime.counter(['pair-events']), 1);
    t.equal(server.deps.store.db('door_views').get(['a']), 'open+open', 'the read model was derived');
  });
});

t.test('turns on one actor are serialized; every acknowledged change is counted once', async (t) => {
  const server = await openDoorServer(t);
  await server.request('POST', '/test/doors/k', { body: { name: 'k' } });
  const responses = await Promise.all(Array.from({ length: 30 }, () => server.request('POST', '/test/doors/k/knock')));
  t.same(
    responses.map((r) => r.status),
    responses.map(() => 200),
  );
  t.same(
    responses.map((r) => r.body.context.knocks).sort((x: number, y: number) => x - y),
    Array.from({ length: 30 }, (_, i) => i + 1),
    'each turn saw the previous one',
  );
  t.equal((await server.request('GET', '/test/doors/k')).body.context.knocks, 30);
});

t.test('a lock holds until the commit is done; distinct keys do not wait', async (t) => {
  const store = openStore(t.testdir());
  const runtime = runtimeOver(t, store);
  const log: string[] = [];
  const marks = store.db<string>('marks');
  const turn = (name: string, key: string) =>
    runtime.run([doorKey(key)], (turn) => {
      log.push(`${name} body`);
      turn.put(marks, [key, name], name);
      turn.afterCommit(() => log.push(`${name} committed`));
    });
  await Promise.all([turn('first', 'same'), turn('second', 'same')]);
  t.same(log, ['first body', 'first committed', 'second body', 'second committed']);
  log.length = 0;
  await Promise.all([turn('third', 'one'), turn('fourth', 'other')]);
  t.same(log.slice(0, 2), ['third body', 'fourth body'], 'the second turn ran while the first was committing');
});

t.test('lockNew holds fresh keys to the end of the turn, drawing again past one a request holds', async (t) => {
  const store = openStore(t.testdir());
  const runtime = runtimeOver(t, store);
  const locks = (runtime as unknown as { locks: KeyLocks }).locks;
  const releaseGuess = await locks.acquire([doorKey('d1')]);
  let drawn = 0;
  const draw = () => [doorKey(`d${++drawn}`)];
  const keys = await runtime.run([], (turn) => {
    const keys = turn.lockNew(draw, (drawnKeys) => drawnKeys);
    t.ok(locks.isHeld(doorKey('d2')), 'held in the turn');
    turn.create('door', ['d2'], { name: 'd2' });
    return keys;
  });
  t.same(keys, [doorKey('d2')], 'd1, which a request holds, is drawn again');
  t.notOk(locks.isHeld(doorKey('d2')), 'released with the turn');
  t.same(runtime.read('door', ['d2'])?.context, { name: 'd2', opens: 0, knocks: 0 });
  const never = runtime.run([], (turn) => turn.lockNew(() => [doorKey('d1')], (drawnKeys) => drawnKeys));
  await t.rejects(never, { status: 503, code: 'E_UNAVAILABLE' });
  releaseGuess();
});

t.test('runHolding runs a turn again holding the locks it asked for, and answers 503 once five attempts each asked for more', async (t) => {
  const store = openStore(t.testdir());
  const runtime = runtimeOver(t, store);
  const marks = store.db<string>('marks');

  const heldWhenWritten: string[][] = [];
  let attempts = 0;
  const grown = await runHolding(runtime, [doorKey('a')], (turn, hold) => {
    attempts++;
    hold([doorKey('b')]);
    heldWhenWritten.push(['a', 'b', 'c'].filter((k) => turn.holds(doorKey(k))));
    turn.put(marks, ['grown'], 'written');
    return 'done';
  }, 'never busy');
  t.equal(grown, 'done');
  t.equal(attempts, 2, 'the first attempt asked for b');
  t.same(heldWhenWritten, [['a', 'b']], 'written once, holding both');
  t.equal(marks.get(['grown']), 'written');

  attempts = 0;
  const restless = runHolding(runtime, [doorKey('a')], (turn, hold) => {
    attempts++;
    turn.put(marks, ['restless'], 'written');
    hold([doorKey(`moved-${attempts}`)]);
  }, 'The door kept moving; try again');
  await t.rejects(restless, { status: 503, code: 'E_UNAVAILABLE', message: 'The door kept moving; try again' });
  t.equal(attempts, 5);
  t.equal(marks.get(['restless']), undefined, 'no attempt committed');

  attempts = 0;
  const failing = runHolding(runtime, [doorKey('a')], () => {
    attempts++;
    throw notFound('door', 'a');
  }, 'never busy');
  await t.rejects(failing, { status: 404, code: 'E_DOOR_NOT_FOUND' });
  t.equal(attempts, 1, 'any other error ends it at once');
});

t.test('passivation, the resident cap, and reload from the snapshot', async (t) => {
  const clock = manualClock();
  const store = openStore(t.testdir());
  const runtime = runtimeOver(t, store, { clock, maxActors: 3 });
  const send = (id: string, type: string) => runtime.run([doorKey(id)], (turn) => turn.send<DoorContext>('door', [id], { type }));
  for (const id of ['d1', 'd2', 'd3', 'd4', 'd5']) {
    await runtime.run([doorKey(id)], (turn) => turn.create('door', [id], { name: id }));
    t.ok(runtime.residentCount <= 3, `at most 3 resident after creating ${id}`);
  }
  t.equal(runtime.residentCount, 3);
  await send('d1', 'door.open');
  await send('d1', 'door.close');
  const reopened = await send('d1', 'door.open');
  t.same(reopened, { state: 'open', context: { name: 'd1', opens: 2, knocks: 0 } }, 'an evicted actor reloads its snapshot');
  t.equal(runtime.residentCount, 3);

  clock.advance(30_000);
  await send('d2', 'door.knock');
  clock.advance(30_000);
  runtime.passivateIdle();
  t.equal(runtime.residentCount, 1, 'only the actor used within the idle time stays');
  clock.advance(60_000);
  runtime.passivateIdle();
  t.equal(runtime.residentCount, 0);
  t.same(await send('d1', 'door.close'), { state: 'closed', context: { name: 'd1', opens: 2, knocks: 0 } });
  t.same(await send('d2', 'door.knock'), { state: 'closed', context: { name: 'd2', opens: 0, knocks: 2 } });
});

t.test('an actor used again after another was created moves behind it: the idle sweep passivates the one idle longest', async (t) => {
  const clock = manualClock();
  const store = openStore(t.testdir());
  const runtime = runtimeOver(t, store, { clock });
  const send = (id: string) => runtime.run([doorKey(id)], (turn) => turn.send('door', [id], { type: 'door.knock' }));
  await runtime.run([doorKey('r1')], (turn) => turn.create('door', ['r1'], { name: 'r1' }));
  await send('r1');
  await runtime.run([doorKey('r2')], (turn) => turn.create('door', ['r2'], { name: 'r2' }));
  clock.advance(30_000);
  await send('r1');
  clock.advance(31_000);
  runtime.passivateIdle();
  t.equal(runtime.residentCount, 1, 'r2, idle for the idle time, is passivated; r1, used since, stays');
});

t.test('the idle sweep passivates a slice of actors per event-loop turn, so requests run in between', async (t) => {
  const clock = manualClock();
  const store = openStore(t.testdir());
  const runtime = runtimeOver(t, store, { clock, passivationSlice: 2 });
  for (const id of ['s1', 's2', 's3', 's4', 's5']) await runtime.run([doorKey(id)], (turn) => turn.create('door', [id], { name: id }));
  clock.advance(60_000);
  await runtime.run([doorKey('s5')], (turn) => turn.send('door', ['s5'], { type: 'door.open' }));
  runtime.passivateIdle();
  t.equal(runtime.residentCount, 3, 'one slice at once');
  let between = -1;
  await new Promise<void>((resolve) =>
    setImmediate(() => {
      between = runtime.residentCount;
      resolve();
    }),
  );
  t.equal(between, 1, 'the next slice a turn later');
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(runtime.residentCount, 1, 'the actor used within the idle time stays');
  t.same(runtime.read('door', ['s1']), { state: 'closed', context: { name: 's1', opens: 0, knocks: 0 } }, 'a passivated actor is still stored');
});

t.test('passivation forgets an actor that holds only its snapshot, and stops one with a delayed event pending', async (t) => {
  // Rings for a minute once set: a pending delayed event, which only stopping the actor cancels.
  const alarmMachine = setup({ types: { events: {} as { type: 'alarm.set' } } }).createMachine({
    id: 'alarm',
    initial: 'quiet',
    states: { quiet: { on: { 'alarm.set': 'ringing' } }, ringing: { after: { 60_000: 'quiet' } } },
  });
  const clock = manualClock();
  const store = openStore(t.testdir());
  const machines = { ...testMachines, alarm: { machine: alarmMachine, version: 1 } };
  const runtime = runtimeOver(t, store, { machines, clock });
  const stop = Actor.prototype.stop;
  const stopped: Array<{ id: string; pending: number[] }> = [];
  const pending = (actor: Actor<any>) => Object.keys(actor.system.getSnapshot()._scheduledEvents).length;
  Actor.prototype.stop = function (this: Actor<any>) {
    const before = pending(this);
    const result = stop.call(this);
    stopped.push({ id: this.getSnapshot().machine.id, pending: [before, pending(this)] });
    return result;
  };
  t.teardown(() => {
    Actor.prototype.stop = stop;
  });
  await runtime.run([doorKey('p1')], (turn) => turn.create('door', ['p1'], { name: 'p1' }));
  await runtime.run([actorLockKey('alarm', ['a1'])], (turn) => turn.create('alarm', ['a1'], {}));
  await runtime.run([actorLockKey('alarm', ['a1'])], (turn) => turn.send('alarm', ['a1'], { type: 'alarm.set' }));
  clock.advance(60_000);
  runtime.passivateIdle();
  t.equal(runtime.residentCount, 0);
  t.same(stopped, [{ id: 'alarm', pending: [1, 0] }], 'only the alarm is stopped, and that cancels its delayed event');
  t.same(runtime.read('door', ['p1']), { state: 'closed', context: { name: 'p1', opens: 0, knocks: 0 } });
  t.equal(runtime.read('alarm', ['a1'])?.state, 'ringing');
});

t.test('a kind with a snapshot store of its own is created, read, reloaded and removed through it alone', async (t) => {
  const store = openStore(t.testdir());
  const { kept, doors } = doorsElsewhere(store);
  const runtime = runtimeOver(t, store, { maxActors: 1, snapshotStores: { door: doors } });
  await runtime.run([doorKey('d1')], (turn) => turn.create('door', ['d1'], { name: 'd1' }));
  await runtime.run([doorKey('d1')], (turn) => turn.send('door', ['d1'], { type: 'door.open' }));
  t.same(kept.get(['d1']), { state: 'open', opens: 1, knocks: 0 }, 'each change is put through the store');
  t.notOk(store.hasDb('actor:door'), 'no table of its own');
  t.throws(() => runtime.table('door'), /not kept in a table/);
  t.same(runtime.read('door', ['d1']), { state: 'open', context: { name: 'd1', opens: 1, knocks: 0 } });
  await runtime.run([doorKey('d2')], (turn) => turn.create('door', ['d2'], { name: 'd2' }));
  t.equal(runtime.residentCount, 1, 'd1 is passivated');
  const reloaded = await runtime.run([doorKey('d1')], (turn) => turn.send('door', ['d1'], { type: 'door.close' }));
  t.same(reloaded, { state: 'closed', context: { name: 'd1', opens: 1, knocks: 0 } }, 'reloaded from the store');
  await t.rejects(runtime.run([doorKey('d1')], (turn) => turn.create('door', ['d1'], { name: 'd1' })), /already exists/);
  await runtime.run([doorKey('d1')], (turn) => turn.remove('door', ['d1']));
  t.notOk(kept.doesExist(['d1']));
  t.notOk(runtime.exists('door', ['d1']));
});

t.test('the stored bytes of the residents are capped too: the least recently used idle ones go first, whatever their count', async (t) => {
  const store = openStore(t.testdir());
  const { doors } = doorsElsewhere(store);
  const runtime = runtimeOver(t, store, { maxActorBytes: 1000, snapshotStores: { door: doors } });
  const residents = () => runtime.residentCount;
  const create = (id: string) => runtime.run([doorKey(id)], (turn) => turn.create('door', [id], { name: id }));
  const knock = (id: string) => runtime.run([doorKey(id)], (turn) => turn.send('door', [id], { type: 'door.knock' }));
  for (const id of ['a', 'b', 'c']) await create(id);
  t.equal(runtime.residentBytes, 300, 'a new door weighs what its store stored');
  await knock('a');
  t.equal(runtime.residentBytes, 400, 'a change weighs it again');
  for (let i = 0; i < 7; i++) await knock('c');
  t.same([residents(), runtime.residentBytes], [2, 1000], 'over 1000 bytes, the least recently used (b) is passivated');
  await knock('b');
  t.same([residents(), runtime.residentBytes], [2, 1000], 'b, activated with its stored weight (then knocked), passivates a');
  for (let i = 0; i < 10; i++) await knock('b');
  t.same([residents(), runtime.residentBytes], [0, 0], 'a door heavier than the cap alone is used for its turn, then passivated');
  t.same(runtime.read('door', ['b']), { state: 'closed', context: { name: 'b', opens: 0, knocks: 11 } }, 'and kept');
  await knock('c');
  await runtime.run([doorKey('c')], (turn) => {
    turn.send('door', ['c'], { type: 'door.knock' });
    turn.remove('door', ['c']);
  });
  t.same([residents(), runtime.residentBytes], [0, 0], 'a door changed, then removed in one turn, leaves no weight behind');
});

t.test('SVC_MAX_ACTORS caps the resident actors of a running server', async (t) => {
  const server = await startServer(t, { machines: testMachines, extraRoutes: doorRoutes, env: { SVC_MAX_ACTORS: '2' } });
  for (const id of ['c1', 'c2', 'c3', 'c4']) {
    t.equal((await server.request('POST', `/test/doors/${id}`, { body: { name: id } })).status, 200);
    t.ok(server.deps.runtime.residentCount <= 2, `at most 2 resident after ${id}`);
  }
  t.equal((await server.request('POST', '/test/doors/c1/open')).body.state, 'open', 'an evicted door still answers');
});

t.test('a removed actor is gone, from disk and from memory', async (t) => {
  const server = await openDoorServer(t);
  await server.request('POST', '/test/doors/r', { body: { name: 'gone' } });
  await server.request('POST', '/test/doors/r/knock');
  t.equal((await server.request('DELETE', '/test/doors/r')).status, 204);
  t.equal((await server.request('GET', '/test/doors/r')).status, 404);
  t.equal((await server.request('POST', '/test/doors/r/knock')).status, 404, 'no stale resident answers');
  const again = await server.request('POST', '/test/doors/r', { body: { name: 'gone' } });
  t.equal(again.status, 200, 'the key and the name can be used again');
  t.same(again.body.context, { name: 'gone', opens: 0, knocks: 0 });
  t.equal(server.deps.runtime.counter(['doors']), 1);
});

t.test('an actor removed and created again in one turn is the new one for the rest of the turn', async (t) => {
  const server = await openDoorServer(t);
  const { runtime } = server.deps;
  await server.request('POST', '/test/doors/again', { body: { name: 'old' } });
  const seen = await runtime.run([doorKey('again')], (turn) => {
    turn.remove('door', ['again']);
    turn.create('door', ['again'], { name: 'new' });
    turn.send('door', ['again'], { type: 'door.knock' });
    return turn.get<DoorContext>('door', ['again'])?.context;
  });
  t.same(seen, { name: 'new', opens: 0, knocks: 1 });
  t.same(runtime.read<DoorContext>('door', ['again'])?.context, { name: 'new', opens: 0, knocks: 1 }, 'and so it is committed');
});

t.test('snapshots, indexes and counters survive a restart on the same data dir', async (t) => {
  const dataDir = t.testdir();
  const first = await openDoorServer(t, dataDir);
  await first.request('POST', '/test/doors/p', { body: { name: 'porch' } });
  await first.request('POST', '/test/doors/p/open');
  await first.close();
  const second = await openDoorServer(t, dataDir);
  t.same((await second.request('GET', '/test/doors/p')).body, { state: 'open', context: { name: 'porch', opens: 1, knocks: 0 } });
  t.equal(second.deps.runtime.counter(['doors']), 1);
  t.equal((await second.request('POST', '/test/doors/q', { body: { name: 'porch' } })).status, 409, 'the name index survived');
  t.equal((await second.request('POST', '/test/doors/p/close')).status, 200);
});

/**
 * Doors kept outside the runtime's tables, as users are: only what the machine needs to come back (its
 * state and its context). A door weighs 100 bytes and 100 more per knock.
 */
function doorsElsewhere(store: Store) {
  const kept = store.db<{ state: string; opens: number; knocks: number }>('doors_elsewhere');
  const weight = (knocks: number) => 100 * (1 + knocks);
  const doors: SnapshotStore = {
    get: (key) => {
      const door = kept.get(key);
      return door && {
        v: 1,
        snapshot: { status: 'active', value: door.state, historyValue: {}, children: {}, context: { name: key[0], opens: door.opens, knocks: door.knocks } },
        bytes: weight(door.knocks),
      };
    },
    doesExist: (key) => kept.doesExist(key),
    put: (key, snapshot) => {
      kept.put(key, { state: snapshot.value as string, opens: snapshot.context.opens, knocks: snapshot.context.knocks });
      return weight(snapshot.context.knocks);
    },
    remove: (key) => kept.remove(key),
  };
  return { kept, doors };
}
