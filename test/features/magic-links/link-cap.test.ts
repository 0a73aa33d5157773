import t from 'tap';
import { startServer, type TestServer } from '../../helpers/server.js';
import { tokenFor } from '../../helpers/tokens.js';
import { linkPath, requestLink } from '../../helpers/sign-in.js';
import { manualClock } from '../../../src/lib/clock.js';
import { PENDING_LINKS_PER_USER_LIMIT } from '../../../src/features/magic-links/link-store.js';
import { platform } from '../groups/helpers.js';

const meLink = (server: TestServer, token: string, expiration = '1h') =>
  server.request('POST', '/me/auth/magic', { token, body: { expiration } });

/** Stored links of any state, spent and expired ones included. */
const storedLinks = (server: TestServer) => server.deps.store.db('magic_links').getCount();

t.test('a user holds at most 100 unused links of every kind: the 101st is 400 and stores nothing', async (t) => {
  const clock = manualClock(Date.now());
  const server = await startServer(t, { clock });
  const api = platform(server);
  const ada = await tokenFor(server, { email: 'ada@example.com' });
  const [group, other] = [(await api.post('/groups', { name: 'Crew' })).body, (await api.post('/groups', { name: 'Other' })).body];

  const invited = await api.post(`/groups/${group.id}/invites`, { user_id: ada.userId, roles: [] });
  t.equal(invited.status, 200, 'an invite link counts');
  t.equal((await requestLink(server, 'ada@example.com')).status, 200, 'a platform link counts');
  const shortLived = await meLink(server, ada.token, '30m');
  const first = await meLink(server, ada.token);
  for (let made = 5; made <= PENDING_LINKS_PER_USER_LIMIT; made++) {
    const res = await meLink(server, ada.token);
    if (res.status !== 200) throw new Error(`link ${made} answered ${res.status}: ${res.text}`);
  }
  const stored = storedLinks(server);

  const refusedMe = await meLink(server, ada.token);
  t.equal(refusedMe.status, 400, 'a /me link');
  t.equal(refusedMe.body.code, 'E_VALIDATION');
  t.match(refusedMe.body.message, /holds 100 unused links/);
  const byAddress = await requestLink(server, 'ada@example.com');
  t.equal(byAddress.status, 400, 'a platform link by address');
  t.match(byAddress.body.field_errors['data.email'], [/100 unused links/]);
  const byId = await requestLink(server, 'ada@example.com', { user_id: ada.userId });
  t.match(byId.body.field_errors.user_id, [/100 unused links/], 'a platform link by user_id');
  const invite = await api.post(`/groups/${other.id}/invites`, { user_id: ada.userId, roles: [] });
  t.equal(invite.status, 400, 'an invite, whose link would be the 101st');
  t.match(invite.body.field_errors.user_id, [/100 unused links/]);
  t.equal((await api.get(`/groups/${other.id}/invites`)).body.total_results, 0, 'no invite made');
  t.equal((await api.get(`/groups/${other.id}/members`)).body.total_results, 0, 'no member made');
  const fresh = await requestLink(server, 'new@example.com');
  t.equal(fresh.status, 200, 'another user is not held to ada\'s links');
  t.equal(storedLinks(server), stored + 1, 'only that link was stored');

  t.equal((await server.request('GET', linkPath(first.body.link))).status, 200, 'a link is spent');
  t.equal((await meLink(server, ada.token)).status, 200, 'its slot is free');
  t.equal((await meLink(server, ada.token)).status, 400);

  clock.advance(30 * 60_000);
  t.equal((await server.request('GET', linkPath(shortLived.body.link))).status, 410, 'a link expired');
  // At 99 again: of a concurrent burst exactly one passes.
  const burst = await Promise.all(Array.from({ length: 5 }, () => meLink(server, ada.token)));
  t.same(burst.map((res) => res.status).sort(), [200, 400, 400, 400, 400], 'one of the burst is made');
  t.equal((await meLink(server, ada.token)).status, 400);
});

t.test('links of a session that has ended no longer count: they can never be redeemed', async (t) => {
  const server = await startServer(t);
  const bob = await tokenFor(server, { email: 'bob@example.com' });
  for (let made = 1; made <= PENDING_LINKS_PER_USER_LIMIT; made++) t.equal((await meLink(server, bob.token)).status, 200);
  t.equal((await requestLink(server, 'bob@example.com')).status, 400);
  const signOut = await server.request('POST', `/me/applications/${server.app.id}/signout`, { token: bob.token, body: {} });
  t.equal(signOut.status, 204);
  t.equal((await requestLink(server, 'bob@example.com')).status, 200, 'the app can sign bob in again');
});
