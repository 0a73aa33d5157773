import t, { type Test } from 'tap';
import { startServer, type TestServer } from '../../helpers/server.js';
import { linkPath, meProbe as probe, refreshWith as refresh, requestLink, signInByLink, type SignedIn } from '../../helpers/sign-in.js';
import { manualClock } from '../../../src/lib/clock.js';
import { LIVE_SESSIONS_PER_USER_LIMIT, REFRESH_TOKEN_TTL_MS } from '../../../src/features/sessions/session-store.js';

const DAY_MS = 24 * 3600 * 1000;

/** `count` sign-ins of Ada, one after the other, oldest first. */
async function signIns(server: TestServer, count: number): Promise<SignedIn[]> {
  const sessions: SignedIn[] = [];
  for (let i = 0; i < count; i++) sessions.push(await signInByLink(server, 'ada@example.com'));
  return sessions;
}

/** The sessions stored for a user (its live ones: ended ones are deleted). */
const storedSessions = (server: TestServer, userId: string) =>
  [...server.deps.store.db('sessions').getKeys({})].filter((key) => (key as string[])[1] === userId).length;

async function assertEnded(t: Test, server: TestServer, session: SignedIn) {
  const access = await probe(server, session.access_token);
  t.equal(access.status, 401, 'its access token is refused');
  t.equal(access.body.code, 'E_TOKEN_REVOKED');
  const refreshed = await refresh(server, session.refresh_token);
  t.equal(refreshed.status, 400, 'its refresh token is refused');
  t.equal(refreshed.body.code, 'E_INVALID_REFRESH_TOKEN');
}

/** Every one of `sessions` still works: its access token and its refresh token (spent here). */
async function assertLive(t: Test, server: TestServer, sessions: SignedIn[], { access = true } = {}) {
  if (access) {
    const probed = await Promise.all(sessions.map((session) => probe(server, session.access_token)));
    t.same(new Set(probed.map((res) => res.status)), new Set([200]), 'their access tokens work');
  }
  const refreshed = await Promise.all(sessions.map((session) => refresh(server, session.refresh_token)));
  t.same(new Set(refreshed.map((res) => res.status)), new Set([200]), 'their refresh tokens work');
}

t.test('a user keeps 100 sessions; the 101st sign-in ends exactly the oldest and succeeds', async (t) => {
  // One millisecond for all: sessions started in it still end oldest first.
  const server = await startServer(t, { clock: manualClock() });
  const bob = await signInByLink(server, 'bob@example.com');
  const sessions = await signIns(server, LIVE_SESSIONS_PER_USER_LIMIT);
  const userId = sessions[0].app_user_id;
  t.equal(storedSessions(server, userId), 100);
  t.equal((await probe(server, sessions[0].access_token)).status, 200, 'the oldest lives at 100');

  const newest = await signInByLink(server, 'ada@example.com');
  t.equal((await probe(server, newest.access_token)).status, 200, 'the 101st sign-in succeeds');
  t.equal(storedSessions(server, userId), 100);
  await assertEnded(t, server, sessions[0]);
  await assertLive(t, server, [...sessions.slice(1), newest]);
  await assertLive(t, server, [bob]);
});

t.test('concurrent sign-ins at 99 sessions leave 100, the oldest ended', async (t) => {
  const server = await startServer(t);
  const sessions = await signIns(server, LIVE_SESSIONS_PER_USER_LIMIT - 1);
  const userId = sessions[0].app_user_id;
  const links = await Promise.all(Array.from({ length: 5 }, async () => (await requestLink(server, 'ada@example.com')).body.link as string));
  const redeemed = await Promise.all(links.map((link) => server.request('GET', linkPath(link))));
  t.same(redeemed.map((res) => res.status), [200, 200, 200, 200, 200], 'every sign-in succeeds');
  t.equal(storedSessions(server, userId), 100);
  for (const session of sessions.slice(0, 4)) await assertEnded(t, server, session);
  await assertLive(t, server, [...sessions.slice(4), ...redeemed.map((res) => res.body)]);
});

t.test('an ended session frees its slot', async (t) => {
  const server = await startServer(t);
  const sessions = await signIns(server, LIVE_SESSIONS_PER_USER_LIMIT);
  const userId = sessions[0].app_user_id;
  const signOut = await server.request('POST', `/me/applications/${server.app.id}/signout`, { token: sessions[50].access_token, body: {} });
  t.equal(signOut.status, 204);

  await signInByLink(server, 'ada@example.com');
  t.equal(storedSessions(server, userId), 100);
  t.equal((await probe(server, sessions[0].access_token)).status, 200, 'the oldest lives on');
  await signInByLink(server, 'ada@example.com');
  t.equal(storedSessions(server, userId), 100);
  await assertEnded(t, server, sessions[0]);
  await assertLive(t, server, [...sessions.slice(1, 50), ...sessions.slice(51)]);
});

t.test('an expired session frees its slot', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const expiring = await signInByLink(server, 'ada@example.com');
  clock.advance(DAY_MS);
  const sessions = await signIns(server, LIVE_SESSIONS_PER_USER_LIMIT - 1);
  const userId = sessions[0].app_user_id;
  clock.advance(REFRESH_TOKEN_TTL_MS - DAY_MS);

  await signInByLink(server, 'ada@example.com');
  t.equal(storedSessions(server, userId), 100, 'the expired one is forgotten');
  const newest = await signInByLink(server, 'ada@example.com');
  t.equal(storedSessions(server, userId), 100);
  t.equal((await refresh(server, expiring.refresh_token)).status, 400);
  // Their access tokens have expired by now: the refresh tokens tell which sessions live.
  t.equal((await refresh(server, sessions[0].refresh_token)).status, 400, 'the oldest live one ended');
  await assertLive(t, server, [...sessions.slice(1), newest], { access: false });
});
