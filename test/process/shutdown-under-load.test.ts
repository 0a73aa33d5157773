import t, { type Test } from 'tap';
import { runCli, startChildServer, type ChildServer, type Exit } from '../helpers/child.js';
import { ADMIN_TOKEN, prepareApp, writeKinds, type CrashContext } from '../crash/write-kinds.js';

const WRITERS = 64;
const ACKS_BEFORE_STOP = 200;
/** How long after its grace a stopped server may take to exit: the cut requests' turns end, the data dir closes. */
const EXIT_AFTER_GRACE_MS = 5_000;

t.setTimeout(180_000);

/**
 * SIGTERM once ACKS_BEFORE_STOP writes of every crash kind are acknowledged, WRITERS of them in flight; then a
 * restart finds every acknowledged write, and `verify` finds nothing half applied.
 */
async function stopUnderLoad(t: Test, graceMs: number): Promise<ChildServer | undefined> {
  const dataDir = t.testdir();
  const env = {
    SVC_ADMIN_TOKEN: ADMIN_TOKEN,
    SVC_RATE_LIMIT_APP: '0',
    SVC_RATE_LIMIT_USER_WRITES: '0',
    SVC_RATE_LIMIT_HUB_IP: '0',
    SVC_SHUTDOWN_GRACE_MS: String(graceMs),
  };
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
  const deadline = graceMs + EXIT_AFTER_GRACE_MS;
  const exit = await Promise.race([server.exited, new Promise<Exit | 'running'>((resolve) => setTimeout(() => resolve('running'), deadline))]);
  globalThis.fetch = realFetch;
  t.same(exit, { code: 0, signal: null }, `a clean exit within ${deadline} ms: ${server.stderr().slice(-1000)}`);
  if (exit === 'running') {
    server.child.kill('SIGKILL');
    return undefined;
  }
  t.ok(inFlightAtStop > 0, `writes were in flight at the stop (${inFlightAtStop}); it exited ${(await exitedAt) - stoppedAt} ms after`);
  t.ok(refused > 0, `new connections were refused during and after the drain (${refused})`);
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
  return server;
}

t.test(`SIGTERM under ${WRITERS} concurrent writes: every one in flight is answered and kept, none answers 5xx, verify is clean, exit 0`, async (t) => {
  const server = await stopUnderLoad(t, 10_000);
  t.notMatch(server?.stdout(), /grace period over/, 'no request was cut');
});

t.test(`SIGTERM under ${WRITERS} concurrent writes with no grace: the requests cut finish their turns before the data dir closes, exit 0`, async (t) => {
  // The data dir was closed under the turns of the requests cut: the process died of SIGSEGV, of an lmdb-js
  // error (exit 1), or never exited.
  let cut = 0;
  for (let round = 0; round < 3; round++) {
    await t.test(`round ${round + 1}`, async (t) => {
      const server = await stopUnderLoad(t, 0);
      if (server && /grace period over/.test(server.stdout())) cut++;
    });
  }
  t.ok(cut > 0, `requests were cut in ${cut} of 3 rounds`);
});
