import t from 'tap';
import { startServer, type TestServer } from '../helpers/server.js';
import { tokenFor } from '../helpers/tokens.js';
import { manualClock } from '../../src/lib/clock.js';
import { userLock } from '../../src/features/users/directory.js';
import { groupLock } from '../../src/features/groups/keys.js';
import { holdLocks, queueOn } from '../helpers/locks.js';

/**
 * A `/me` request is authenticated before its turn waits for the user's lock. Holding that lock, the
 * test queues the user's deletion and its re-creation under the same ID ahead of the request: the
 * old token must not act on the new user once the turn runs.
 */
async function behindRecreation(
  t: { equal(found: unknown, wanted: unknown): void },
  server: TestServer,
  clock: ReturnType<typeof manualClock>,
  step: number,
  mine: (token: string) => Promise<Response>,
) {
  const { userId, token } = await tokenFor(server, { user_id: 'reborn' });
  const lock = userLock(server.app.id, userId);
  const release = await holdLocks(server, [lock]);
  const platform = (method: string, body?: object) =>
    fetch(`${server.url}/applications/${server.app.id}/users/${userId}/data`, {
      method,
      headers: { 'x-svc-app-key': server.app.key, 'x-svc-app-secret': server.app.secret, 'content-type': 'application/json' },
      body: body && JSON.stringify(body),
    });
  clock.advance(step);
  const deleted = await queueOn(server, lock, () => platform('DELETE'));
  const recreated = await queueOn(server, lock, () => platform('PUT', { data: { first_name: 'New' } }));
  const acted = await queueOn(server, lock, () => mine(token));
  release();
  t.equal((await deleted.answer).status, 204);
  t.equal((await recreated.answer).status, 200);
  return { userId, answer: await acted.answer };
}

// Stepped back, the clock makes the new user before the old session started: only the token's user creation instant tells them apart.
for (const [when, step] of [['a second later', 1000], ['after the clock was stepped back (NTP)', -3600_000]] as const) {
  t.test(`a /me write that waited for its user does not land on the user re-created under that ID ${when}`, async (t) => {
    const clock = manualClock(Date.now());
    const server = await startServer(t, { clock });
    const me = (token: string, method: string, path: string, body: object) =>
      fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const writes: Array<[string, string, object]> = [
      ['PATCH', `/me/applications/${server.app.id}/data`, { data: { last_name: 'Old' } }],
      ['PUT', `/me/applications/${server.app.id}/data/fields/last_name`, { value: 'Old' }],
      ['PUT', '/me/meta', { last_passkey_registration_prompt: new Date(clock.now()).toISOString() }],
      ['POST', '/me/auth/magic', {}],
      ['POST', '/me/groups', { name: 'not theirs' }],
    ];
    for (const [method, path, body] of writes) {
      const { userId, answer } = await behindRecreation(t, server, clock, step, (token) => me(token, method, path, body));
      t.equal(answer.status, 401, `${method} ${path}`);
      t.equal((await answer.json()).code, 'E_TOKEN_REVOKED');
      const reborn = server.deps.users.require(server.app.id, userId).context;
      t.same(reborn.data, { first_name: 'New', user_id: userId }, 'the new user is as the app made it');
      t.equal(reborn.meta.last_passkey_registration_prompt, undefined);
      t.equal((await server.request('GET', `/applications/${server.app.id}/groups`, { app: server.app })).body.total_results, 0, 'no group');
      await server.request('DELETE', `/applications/${server.app.id}/users/${userId}/data`, { app: server.app });
    }
  });
}

t.test('a /me change that waited behind a sign-out everywhere is refused like the next request (401)', async (t) => {
  const clock = manualClock(Date.now());
  const server = await startServer(t, { clock });
  const { userId, token } = await tokenFor(server, { user_id: 'owner' });
  const as = (bearer: string) => (method: string, path: string, body?: object) =>
    fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
  const group = (await (await as(token)('POST', '/me/groups', { name: 'Mine' })).json()).group;
  const signOutEverywhere = () =>
    server.request('POST', `/applications/${server.app.id}/users/${userId}/signout`, { app: server.app, body: { sign_out_all: true } });
  const changes: Array<[string, string, object | undefined]> = [
    ['PUT', `/me/groups/${group.id}`, { name: 'Renamed' }],
    ['DELETE', `/me/groups/${group.id}`, undefined],
    ['POST', `/me/applications/${server.app.id}/signout`, { sign_out_all: false }],
  ];
  for (const [method, path, body] of changes) {
    clock.advance(1000);
    const me = as((await tokenFor(server, { user_id: userId })).token);
    let acted: { answer: Promise<Response> };
    if (path.startsWith('/me/groups')) {
      // A group change waits for its group; the sign-out, a write to the user, passes it meanwhile.
      const lock = groupLock(server.app.id, group.id);
      const release = await holdLocks(server, [lock]);
      acted = await queueOn(server, lock, () => me(method, path, body));
      t.equal((await signOutEverywhere()).status, 204);
      release();
    } else {
      // The user's own sign-out waits for the user, behind the sign-out everywhere.
      const lock = userLock(server.app.id, userId);
      const release = await holdLocks(server, [lock]);
      const signedOut = await queueOn(server, lock, signOutEverywhere);
      acted = await queueOn(server, lock, () => me(method, path, body));
      release();
      t.equal((await signedOut.answer).status, 204);
    }
    const answer = await acted.answer;
    t.equal(answer.status, 401, `${method} ${path}`);
    t.equal((await answer.json()).code, 'E_TOKEN_REVOKED');
    clock.advance(1000);
    const { token: fresh } = await tokenFor(server, { user_id: userId });
    t.equal((await server.request('GET', `/me/groups/${group.id}`, { token: fresh })).body.group.name, 'Mine', 'nothing changed');
  }
});
