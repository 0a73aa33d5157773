import t from 'tap';
import { startChildServer } from '../helpers/child.js';
import { ADMIN_TOKEN, prepareApp, writeKinds, type CrashContext } from './write-kinds.js';

/** Writers per kind, running at once, and the acknowledged writes to collect before the kill. */
const WRITERS_PER_KIND = 6;
const ACKS_BEFORE_KILL = 300;

t.test('every acknowledged write survives SIGKILL under concurrent load', async (t) => {
  const dataDir = t.testdir();
  // No rate limits: the kinds that sign users in would otherwise be held to a few writes.
  const env = { SVC_ADMIN_TOKEN: ADMIN_TOKEN, SVC_RATE_LIMIT_APP: '0', SVC_RATE_LIMIT_USER_WRITES: '0', SVC_RATE_LIMIT_HUB_IP: '0' };
  const server = await startChildServer(t, { dataDir, env });
  const context: CrashContext = { server, defaultApp: server.defaultApp! };
  await prepareApp(context);
  const acks = writeKinds.map(() => [] as unknown[]);
  let total = 0;
  let inFlight = 0;
  let inFlightAtKill = -1;
  let killed = false;
  let counter = 0;

  const writer = async (kind: number) => {
    while (!killed) {
      const n = counter++;
      inFlight++;
      try {
        const ack = await writeKinds[kind].write(context, n);
        if (ack !== undefined && !killed) {
          acks[kind].push(ack);
          if (++total === ACKS_BEFORE_KILL) {
            inFlightAtKill = inFlight - 1;
            killed = true;
            server.child.kill('SIGKILL');
          }
        } else if (ack !== undefined) {
          // Answered after the kill was sent: acknowledged all the same, so it must survive too.
          acks[kind].push(ack);
        }
      } catch {
        // The connection died with the process: never acknowledged, so nothing to check.
      } finally {
        inFlight--;
      }
    }
  };
  await Promise.all(writeKinds.flatMap((_, kind) => Array.from({ length: WRITERS_PER_KIND }, () => writer(kind))));
  t.same(await server.exited, { code: null, signal: 'SIGKILL' });
  t.ok(inFlightAtKill > 0, `writes were in flight at the kill (${inFlightAtKill})`);

  const restarted = await startChildServer(t, { dataDir, env });
  t.equal(restarted.defaultApp, undefined, 'the restart found its data: no new default app');
  const after: CrashContext = { server: restarted, defaultApp: context.defaultApp };
  for (const [index, kind] of writeKinds.entries()) {
    t.ok(acks[index].length > 0, `${kind.name}: ${acks[index].length} acknowledged`);
    t.same(await kind.missing(after, acks[index]), [], `${kind.name}: every acknowledged write reads back`);
  }
});
