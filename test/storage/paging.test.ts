import t from 'tap';
import fc from 'fast-check';
import pino from 'pino';
import { openStore } from '../../src/storage/store.js';
import { readPage, type SortOrder } from '../../src/storage/paging.js';
import { ActorRuntime } from '../../src/runtime/runtime.js';
import { newId } from '../../src/lib/ids.js';
import { manualClock } from '../../src/lib/clock.js';

const store = openStore(t.testdir());
t.teardown(() => store.close());
const runtime = new ActorRuntime({ store, machines: {}, clock: manualClock(), logger: pino({ level: 'silent' }), maxActors: 10, maxActorBytes: 1 << 30, idleMs: 60_000 });
t.teardown(() => runtime.stop());
const records = store.db<{ n: number }>('records');
const total = (appId: string) => runtime.counter([appId, 'records']);

/** Adds `count` records under `appId` the way features do: the entry and its counter in one turn. */
async function addRecords(appId: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => newId('user'));
  await runtime.run([], (turn) => {
    ids.forEach((id, n) => turn.put(records, [appId, id], { n }));
    turn.count([appId, 'records'], count);
  });
  return ids;
}

async function removeRecord(appId: string, id: string): Promise<void> {
  await runtime.run([], (turn) => {
    turn.del(records, [appId, id]);
    turn.count([appId, 'records'], -1);
  });
}

function readAll(appId: string, pageSize: number, sort: SortOrder): string[][] {
  const pages: string[][] = [];
  let after: string | undefined;
  for (;;) {
    const page = readPage(records, { prefix: [appId], pageSize, after, sort }).map((e) => e.id);
    if (page.length === 0) return pages;
    pages.push(page);
    after = page[page.length - 1];
  }
}

t.test('every record exactly once across pages, in both orders, at any page size', async (t) => {
  // Neighbours on both sides of the prefix must never leak into its pages.
  await addRecords('app_0', 3);
  await addRecords('app_z', 3);
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 12 }), async (count, pageSize) => {
      const appId = `app_m${run++}`;
      const ids = await addRecords(appId, count);
      const asc = readAll(appId, pageSize, 'asc');
      const desc = readAll(appId, pageSize, 'desc');
      t.same(asc.flat(), ids, 'asc: creation order, no gap, no duplicate');
      t.same(desc.flat(), [...ids].reverse(), 'desc: newest first, no gap, no duplicate');
      t.same(asc.slice(0, -1).map((p) => p.length), asc.slice(0, -1).map(() => pageSize), 'only the last page is short');
      t.ok([...asc, ...desc].every((p) => p.length <= pageSize), 'no page is longer than asked');
      t.equal(total(appId), count, 'the counter is exact');
    }),
    { numRuns: 25 },
  );
});

t.test('after is exclusive and works with a cursor whose record is gone', async (t) => {
  const ids = await addRecords('app_cursor', 10);
  t.same(readPage(records, { prefix: ['app_cursor'], pageSize: 3, after: ids[4] }).map((e) => e.id), ids.slice(5, 8));
  t.same(
    readPage(records, { prefix: ['app_cursor'], pageSize: 3, after: ids[4], sort: 'desc' }).map((e) => e.id),
    [ids[3], ids[2], ids[1]],
  );
  await removeRecord('app_cursor', ids[4]);
  t.same(readPage(records, { prefix: ['app_cursor'], pageSize: 3, after: ids[4] }).map((e) => e.id), ids.slice(5, 8));
  t.same(
    readPage(records, { prefix: ['app_cursor'], pageSize: 2, after: ids[4], sort: 'desc' }).map((e) => e.id),
    [ids[3], ids[2]],
  );
  t.equal(total('app_cursor'), 9, 'the counter follows the removal');
  t.same(readPage(records, { prefix: ['app_cursor'], pageSize: 5, after: ids[9] }), [], 'after the last: empty');
  t.same(readPage(records, { prefix: ['app_cursor'], pageSize: 5, after: ids[0], sort: 'desc' }), []);
  t.same(readPage(records, { prefix: ['app_none'], pageSize: 5 }), [], 'an empty prefix');
  t.equal(total('app_none'), 0);
});

t.test('pages stay consistent while records are added between page reads', async (t) => {
  const ids = await addRecords('app_live', 6);
  const first = readPage(records, { prefix: ['app_live'], pageSize: 4 }).map((e) => e.id);
  const later = await addRecords('app_live', 2);
  const second = readPage(records, { prefix: ['app_live'], pageSize: 4, after: first[3] }).map((e) => e.id);
  t.same([...first, ...second], [...ids, ...later], 'new records appear at the end, nothing repeats');
  t.equal(total('app_live'), 8);
});
