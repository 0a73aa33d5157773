import t from 'tap';
import { runCli, startChildServer } from '../helpers/child.js';
import { ADMIN_TOKEN, prepareApp, writeKinds, type CrashContext } from '../crash/write-kinds.js';

const WRITERS = 64;
const ACKS_BEFORE_STOP = 200;
const GRACE_MS = 10_000;

const env = {
  SVC_ADMIN_TOKEN: ADMIN_TOKEN,
  SVC_RATE_LIMIT_APP: '0',
  SVC_RATE_LIMIT_USER_WRITES: '0',
  SVC_RATE_LIMIT_HUB_IP: '0',
  SVC_SHUTDOWN_GRACE_MS: String(GRACE_MS),
};

t.setTimeout(120_000);

t.test(`SIGTERM under ${WRITERS} concurrent writes: every answered write is kept, none answers 5xx, verify is clean, exit 0 within the grace`, async (t) => {
  const dataDir = t.testdir();
  const server = await startChildServer(t, { dataDir, env });
  const context: CrashContext = { server, defaultApp: server.defaultApp! };
  await prepareApp(context);

  // Every answer the writers get, seen through fetch: a 5xx during the drain would be a write refused for the stop.
  const statuses = new Map<number, number>();
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (...args: Parameters<typeof fetch>) => {
    const res = await realFetch(...args);
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    return res;
  };
  t.teardown(() => void (globalThis.fetch = realFetch));

  const acks = writeKinds.map(() => [] as unknown[]);
  let acknowledged = 0;
  let stopped = false;
  let stoppedAt = 0;
  let inFlightAtStop = -1;
  let inFlight = 0;
  let refused = 0;
  let n = 0;
  const writer = async (index: number) => {
    const kind = index % writeKinds.length;
    // Writers go on after the stop: their new connections are refused, the ones in flight answered.
    while (!stopped || Date.now() - stoppedAt < 500) {
      inFlight++;
      try {
        const ack = await writeKinds[kind].write(context, n++);
        if (ack === undefined) continue;
        acks[kind].push(ack);
        if (++acknowledged === ACKS_BEFORE_STOP && !stopped) {
          stopped = true;
          stoppedAt = Date.now();
          inFlightAtStop = inFlight - 1;
          server.child.kill('SIGTERM');
        }
      } catch {
        // A new connection during the drain or after the exit: refused, never acknowledged.
        refused++;
        if (stopped) await new Promise((resolve) => setTimeout(resolve, 20));
      } finally {
        inFlight--;
      }
    }
  };
  const exitedAt = server.exited.then(() => Date.now());
  await Promise.all(Array.from({ length: WRITERS }, (_, i) => writer(i)));
  const exit = await server.exited;
  const stopMs = (await exitedAt) - stoppedAt;
  globalThis.fetch = realFetch;
  t.same(exit, { code: 0, signal: null }, 'a clean exit');
  t.ok(stopMs < GRACE_MS, `exited ${stopMs} ms after the SIGTERM, within the grace`);
  t.ok(inFlightAtStop > 0, `writes were in flight at the stop (${inFlightAtStop})`);
  t.ok(refused > 0, `new connections were refused during and after the drain (${refused})`);
  t.notMatch(server.stdout(), /grace period over/, 'no request was cut');
  const serverErrors = [...statuses].filter(([status]) => status >= 500);
  t.same(serverErrors, [], `no 5xx among ${[...statuses.values()].reduce((a, b) => a + b, 0)} answers`);

  const restarted = await startChildServer(t, { dataDir, env });
  const after: CrashContext = { server: restarted, defaultApp: context.defaultApp };
  for (const [index, kind] of writeKinds.entries()) {
    t.same(await kind.missing(after, acks[index]), [], `${kind.name}: all ${acks[index].length} acknowledged read back`);
  }
  restarted.child.kill('SIGTERM');
  t.same(await restarted.exited, { code: 0, signal: null });
  const verified = await runCli(['verify'], { dataDir, env });
  t.equal(verified.code, 0, `verify is clean: ${verified.stdout.slice(0, 2000)}`);
});
