import t from 'tap';
import { startChildServer, runCli, type ChildServer } from '../helpers/child.js';
import { ADMIN_TOKEN, prepareApp, writeKinds, type CrashContext } from './write-kinds.js';

// Crash campaign (issue 7): cycles of SIGKILL under concurrent mixed writes. After every restart each
// acknowledged write of every cycle so far reads back and `svc verify` finds counters equal to recounts
// and indexes agreeing with records (so nothing unacknowledged is half applied).
// CRASH_CYCLES and CRASH_WRITERS make the long variant.
const CYCLES = Number(process.env.CRASH_CYCLES ?? 20);
const WRITERS = Number(process.env.CRASH_WRITERS ?? 64);
const ACKS_PER_CYCLE = Number(process.env.CRASH_ACKS ?? 200);

// Each cycle takes a few seconds (two process starts, a CLI run): 10-20 s on a loaded host, where 12 s
// each stopped 40 cycles at the 16th, and 240 s for the default 20 stopped them at the 18th (2026-11-28,
// beside other suites). 20 s a cycle; a long variant gets 40 s for each cycle past the 20.
t.setTimeout(400_000 + Math.max(0, CYCLES - 20) * 40_000);

const env = {
  SVC_ADMIN_TOKEN: ADMIN_TOKEN,
  SVC_RATE_LIMIT_APP: '0',
  SVC_RATE_LIMIT_USER_WRITES: '0',
  SVC_RATE_LIMIT_HUB_IP: '0',
};

/** Runs WRITERS concurrent writers over every kind until ACKS_PER_CYCLE acks, then SIGKILLs the server. */
async function loadThenKill(context: CrashContext, acks: unknown[][], cycle: number): Promise<number> {
  let acknowledged = 0;
  let killed = false;
  let n = cycle * 1_000_000;
  const writer = async (index: number) => {
    const kind = index % writeKinds.length;
    while (!killed) {
      try {
        const ack = await writeKinds[kind].write(context, n++);
        if (ack === undefined) continue;
        acks[kind].push(ack);
        if (++acknowledged === ACKS_PER_CYCLE && !killed) {
          killed = true;
          context.server.child.kill('SIGKILL');
        }
      } catch {
        // The connection died with the process: never acknowledged.
      }
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, (_, i) => writer(i)));
  await context.server.exited;
  return acknowledged;
}

t.test(`${CYCLES} cycles of SIGKILL under ${WRITERS} concurrent mixed writes`, async (t) => {
  const dataDir = t.testdir();
  let server: ChildServer = await startChildServer(t, { dataDir, env });
  const defaultApp = server.defaultApp!;
  await prepareApp({ server, defaultApp });
  const acks = writeKinds.map(() => [] as unknown[]);
  /** How many of each kind's acks a cycle has read back since they were made. */
  const checked = writeKinds.map(() => 0);
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    const started = Date.now();
    const acknowledged = await loadThenKill({ server, defaultApp }, acks, cycle);
    t.comment(`cycle ${cycle + 1}: load and kill ${Date.now() - started} ms`);
    server = await startChildServer(t, { dataDir, env });
    const context: CrashContext = { server, defaultApp };
    // This cycle's acks each cycle, every ack at the last: an ack a later crash loses stays lost, so the
    // last cycle still finds it, and reading every ack back each cycle grew the run quadratically.
    const last = cycle === CYCLES - 1;
    const lost: string[] = [];
    for (const [index, kind] of writeKinds.entries()) {
      const checking = last ? acks[index] : acks[index].slice(checked[index]);
      const missing = await kind.missing(context, checking);
      if (missing.length > 0) lost.push(`${kind.name}: ${missing.length} of ${checking.length} lost`);
      checked[index] = acks[index].length;
    }
    t.comment(`cycle ${cycle + 1}: restarted and checked at ${Date.now() - started} ms`);
    const verified = await runCli(['verify'], { dataDir, env });
    const problems = verified.code === 0 ? [] : (JSON.parse(verified.stdout || '{"problems":["no report"]}').problems as string[]);
    if (lost.length > 0 || problems.length > 0) {
      t.fail(`cycle ${cycle + 1}: ${[...lost, ...problems.slice(0, 10)].join('; ')}`);
      return;
    }
    t.pass(`cycle ${cycle + 1}: ${acknowledged} acknowledged, ${last ? `all ${acks.flat().length} so far` : 'all of them'} read back, verify clean`);
  }
  for (const [index, kind] of writeKinds.entries()) t.ok(acks[index].length > 0, `${kind.name}: ${acks[index].length} acknowledged`);
  const fullStories = (acks[writeKinds.findIndex((k) => k.name.startsWith('group'))] as Array<{ stage: number }>).filter((a) => a.stage === 3);
  t.ok(fullStories.length > 0, `${fullStories.length} invites accepted by link before a kill`);
  const joins = (acks[writeKinds.findIndex((k) => k.name.startsWith('open group joined'))] as Array<{ userId?: string }>).filter((a) => a.userId);
  t.ok(joins.length > 0, `${joins.length} open groups joined by link before a kill`);
  server.child.kill('SIGTERM');
  t.same(await server.exited, { code: 0, signal: null }, 'the last server shuts down cleanly');
});
