import t from 'tap';
import fc from 'fast-check';
import { startServer, type TestServer } from '../../helpers/server.js';
import { meProbe, refreshWith, signInByLink } from '../../helpers/sign-in.js';
import { manualClock } from '../../../src/lib/clock.js';
import { verifyStore } from '../../../src/verify/invariants.js';
import { allInvariants } from '../../../src/verify/all.js';

/** What the model expects of one session. */
interface ModelSession {
  email: string;
  userId: string;
  current: string;
  spent: string[];
  access: string[];
  refreshAlive: boolean;
  accessAlive: boolean;
}

type Op =
  | { kind: 'signIn'; who: number }
  | { kind: 'refresh'; session: number; reuse: boolean }
  | { kind: 'probe'; session: number }
  | { kind: 'signOutAll'; who: number }
  | { kind: 'signOutRefresh'; who: number }
  | { kind: 'meSignOut'; session: number; all: boolean }
  /** The clock moves by `ms`: a little forward, or back (NTP), by as much as an hour. */
  | { kind: 'clock'; ms: number };

const EMAILS = ['ada@example.com', 'bob@example.com'];

const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('signIn' as const), who: fc.nat(1) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('refresh' as const), session: fc.nat(), reuse: fc.boolean() }), weight: 5 },
  { arbitrary: fc.record({ kind: fc.constant('probe' as const), session: fc.nat() }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('signOutAll' as const), who: fc.nat(1) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('signOutRefresh' as const), who: fc.nat(1) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('meSignOut' as const), session: fc.nat(), all: fc.boolean() }), weight: 1 },
  // Forward by at most a second a step: no access token (an hour) or link expires within a run.
  { arbitrary: fc.record({ kind: fc.constant('clock' as const), ms: fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.constant(-3600_000)) }), weight: 1 },
);

/** Applies one operation to the service and to the model; answers a mismatch, if any. */
async function step(server: TestServer, clock: ReturnType<typeof manualClock>, sessions: ModelSession[], o: Op): Promise<string | undefined> {
  const pick = (n: number) => sessions[n % sessions.length];
  const ofUser = (email: string) => sessions.filter((s) => s.email === email);
  const killAll = (email: string) => ofUser(email).forEach((s) => ((s.refreshAlive = false), (s.accessAlive = false)));
  switch (o.kind) {
    case 'signIn': {
      const signedIn = await signInByLink(server, EMAILS[o.who]);
      sessions.push({
        email: EMAILS[o.who],
        userId: signedIn.app_user_id,
        current: signedIn.refresh_token,
        spent: [],
        access: [signedIn.access_token],
        refreshAlive: true,
        accessAlive: true,
      });
      return;
    }
    case 'refresh': {
      if (sessions.length === 0) return;
      const s = pick(o.session);
      const token = o.reuse && s.spent.length > 0 ? s.spent[o.session % s.spent.length] : s.current;
      const res = await refreshWith(server, token);
      if (token === s.current && s.refreshAlive) {
        if (res.status !== 200) return `refresh of a live current token: ${res.status}`;
        s.spent.push(s.current);
        s.current = res.body.refresh_token;
        s.access.push(res.body.access_token);
        return;
      }
      if (res.status !== 400) return `refresh of a dead or spent token: ${res.status}`;
      if (s.refreshAlive) ((s.refreshAlive = false), (s.accessAlive = false)); // reuse ends the session
      return;
    }
    case 'probe': {
      if (sessions.length === 0) return;
      const s = pick(o.session);
      const res = await meProbe(server, s.access[o.session % s.access.length]);
      const expected = s.accessAlive ? 200 : 401;
      return res.status === expected ? undefined : `probe: expected ${expected}, got ${res.status} ${res.text}`;
    }
    case 'signOutAll':
    case 'signOutRefresh': {
      const email = EMAILS[o.who];
      const userId = ofUser(email)[0]?.userId;
      if (!userId) return;
      const res = await server.request('POST', `/applications/${server.app.id}/users/${userId}/signout`, {
        app: server.app,
        body: { sign_out_all: o.kind === 'signOutAll' },
      });
      if (res.status !== 204) return `platform sign-out: ${res.status}`;
      if (o.kind === 'signOutAll') killAll(email);
      else ofUser(email).forEach((s) => (s.refreshAlive = false));
      return;
    }
    case 'meSignOut': {
      if (sessions.length === 0) return;
      const s = pick(o.session);
      const res = await server.request('POST', `/me/applications/${server.app.id}/signout`, {
        token: s.access[s.access.length - 1],
        body: { sign_out_all: o.all },
      });
      const expected = s.accessAlive ? 204 : 401;
      if (res.status !== expected) return `me sign-out: expected ${expected}, got ${res.status}`;
      if (!s.accessAlive) return;
      if (o.all) killAll(s.email);
      else ((s.refreshAlive = false), (s.accessAlive = false));
      return;
    }
    case 'clock':
      clock.advance(o.ms);
      return;
  }
}

// A new seed each run, told in the output: MODEL_SEED replays a run, MODEL_RUNS runs more sequences.
const SEED = Number(process.env.MODEL_SEED ?? (Date.now() ^ (Math.random() * 0x100000000)) | 0);
const RUNS = Number(process.env.MODEL_RUNS ?? 40);

t.test('sessions behave like the model under any sequence of sign-ins, refreshes and sign-outs', async (t) => {
  t.comment(`model seed ${SEED} (replay with MODEL_SEED=${SEED})`);
  await fc.assert(
    fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), async (ops) => {
      // The clock moves only when an op steps it: most steps share one millisecond, the hardest case for revocation.
      const clock = manualClock();
      const server = await startServer(t, { clock });
      try {
        const sessions: ModelSession[] = [];
        const start: Op[] = [{ kind: 'signIn', who: 0 }, { kind: 'signIn', who: 1 }];
        for (const o of [...start, ...ops]) {
          const mismatch = await step(server, clock, sessions, o);
          if (mismatch) throw new Error(`${JSON.stringify(o)}: ${mismatch}`);
        }
        const problems = verifyStore(server.deps, allInvariants).problems;
        if (problems.length > 0) throw new Error(problems.join('; '));
      } finally {
        await server.close();
      }
    }),
    { numRuns: RUNS, seed: SEED },
  );
  t.pass('every run matched the model');
});
