import t from 'tap';
import { startServer, type TestServer } from '../helpers/server.js';
import { tokenFor } from '../helpers/tokens.js';
import { buildRoutes } from '../../src/app.js';
import { manualClock } from '../../src/lib/clock.js';
import { userLock } from '../../src/features/users/directory.js';

// Every route × every kind of caller that must be refused: the refusal's status and code, and that
// nothing of another application or user shows in the answer.
const clock = manualClock(Date.now());
const adminToken = 'matrix-admin-token-0123456789';
const server: TestServer = await startServer(t, { clock, env: { SVC_ADMIN_TOKEN: adminToken } });
const { deps } = server;
const names = deps.config.names;

const other = await deps.apps.create('other');
const otherCredential = await deps.apps.createCredential(other.id);
const revoked = await deps.apps.createCredential(server.app.id);
await deps.apps.revokeCredential(server.app.id, revoked.key);

const alice = await tokenFor(server, { email: 'alice@example.com' });
const outsider = await tokenFor(server, { email: 'mallory@example.com' }, other.id);
const expiring = await tokenFor(server, { email: 'late@example.com' });
const disabled = await tokenFor(server, { email: 'off@example.com' });
await deps.runtime.run([userLock(server.app.id, disabled.userId)], (turn) =>
  deps.users.change(turn, server.app.id, disabled.userId, { type: 'user.disable', at: turn.now }),
);
const revokedUser = await tokenFor(server, { email: 'gone@example.com' });
const deletedUser = await tokenFor(server, { email: 'deleted@example.com' });
await server.request('DELETE', `/applications/${server.app.id}/users/${deletedUser.userId}/data`, { app: server.app });
clock.advance(1000);
await deps.runtime.run([userLock(server.app.id, revokedUser.userId)], (turn) =>
  deps.users.change(turn, server.app.id, revokedUser.userId, { type: 'user.revokeAll', at: turn.now }),
);

const appHeaders = (key: string, secret: string) => ({ [names.appKeyHeader]: key, [names.appSecretHeader]: secret });

interface Caller {
  name: string;
  headers: () => Record<string, string>;
  status: number;
  code?: string;
}

const platformCallers: Caller[] = [
  { name: 'no credentials', headers: () => ({}), status: 401, code: 'E_UNAUTHORIZED' },
  { name: 'key without secret', headers: () => ({ [names.appKeyHeader]: server.app.key }), status: 401, code: 'E_UNAUTHORIZED' },
  { name: 'wrong secret', headers: () => appHeaders(server.app.key, 'sec_' + 'x'.repeat(43)), status: 401, code: 'E_UNAUTHORIZED' },
  { name: 'revoked credential', headers: () => appHeaders(revoked.key, revoked.secret), status: 401, code: 'E_UNAUTHORIZED' },
  { name: "another app's credentials", headers: () => appHeaders(otherCredential.key, otherCredential.secret), status: 403, code: 'E_FORBIDDEN' },
  { name: 'a user token instead', headers: () => ({ authorization: `Bearer ${alice.token}` }), status: 401, code: 'E_UNAUTHORIZED' },
];

const bearer = (token: string) => () => ({ authorization: `Bearer ${token}` });
const userCallers = (appScoped: boolean): Caller[] => [
  { name: 'no token', headers: () => ({}), status: 401, code: 'E_UNAUTHORIZED' },
  { name: 'garbage token', headers: bearer('not.a.jwt'), status: 401, code: 'E_UNAUTHORIZED' },
  { name: 'app credentials instead', headers: () => appHeaders(server.app.key, server.app.secret), status: 401, code: 'E_UNAUTHORIZED' },
  { name: 'disabled user', headers: bearer(disabled.token), status: 401, code: 'E_USER_DISABLED' },
  { name: 'revoked session', headers: bearer(revokedUser.token), status: 401, code: 'E_TOKEN_REVOKED' },
  { name: 'deleted user', headers: bearer(deletedUser.token), status: 401, code: 'E_UNAUTHORIZED' },
  ...(appScoped ? [{ name: "another app's user", headers: bearer(outsider.token), status: 403, code: 'E_FORBIDDEN' }] : []),
];

const sampleValue = (param: string) => {
  switch (param) {
    case 'app':
      return server.app.id;
    case 'user':
      return alice.userId;
    default:
      return `${param}_01HZZZZZZZZZZZZZZZZZZZZZZZ`;
  }
};

const adminCallers: Caller[] = [
  { name: 'no token', headers: () => ({}), status: 401, code: 'E_UNAUTHORIZED' },
  { name: 'wrong token', headers: bearer(`${adminToken}x`), status: 401, code: 'E_UNAUTHORIZED' },
  { name: "a user's token", headers: bearer(alice.token), status: 401, code: 'E_UNAUTHORIZED' },
  { name: 'app credentials', headers: () => appHeaders(server.app.key, server.app.secret), status: 401, code: 'E_UNAUTHORIZED' },
];

/** The callers each route must refuse; `/hub/auth/magic` acts for the credentials' own app, so another app's are no refusal there. */
function callersOf(path: string): Caller[] {
  if (path.startsWith('/applications/')) return platformCallers;
  if (path.startsWith('/me/')) return userCallers(path.startsWith('/me/applications/'));
  if (path.startsWith('/admin/')) return adminCallers;
  if (path === '/hub/auth/magic') return platformCallers.filter((caller) => caller.status === 401);
  if (path === '/hub/app-config') {
    return [
      { name: 'no key', headers: () => ({}), status: 401, code: 'E_UNAUTHORIZED' },
      { name: 'revoked key', headers: () => ({ [names.appKeyHeader]: revoked.key }), status: 401, code: 'E_UNAUTHORIZED' },
      { name: 'a user token instead', headers: bearer(alice.token), status: 401, code: 'E_UNAUTHORIZED' },
    ];
  }
  return [];
}

for (const route of buildRoutes(deps)) {
  const path = route.path.replace(/:([a-z_]+)/gi, (_m, name: string) => sampleValue(name));
  const callers = callersOf(route.path);
  if (callers.length === 0) continue;
  t.test(`${route.method} ${route.path}`, async (t) => {
    for (const caller of callers) {
      const response = await server.request(route.method, path, {
        headers: caller.headers(),
        body: route.method === 'GET' || route.method === 'DELETE' ? undefined : {},
      });
      t.equal(response.status, caller.status, `${caller.name} → ${caller.status}`);
      if (caller.code) t.equal(response.body?.code, caller.code, `${caller.name} → ${caller.code}`);
      t.notMatch(response.text, other.id, `${caller.name} sees nothing of another app`);
    }
  });
}

t.test('an expired token is refused with E_TOKEN_EXPIRED on every /me route', async (t) => {
  clock.advance((deps.config.accessTokenTtlSeconds + 1) * 1000);
  for (const route of buildRoutes(deps).filter((r) => r.path.startsWith('/me/'))) {
    const path = route.path.replace(/:([a-z_]+)/gi, (_m, name: string) => sampleValue(name));
    const response = await server.request(route.method, path, { token: expiring.token, body: route.method === 'GET' ? undefined : {} });
    t.equal(response.status, 401, `${route.method} ${route.path}`);
    t.equal(response.body?.code, 'E_TOKEN_EXPIRED');
  }
});

// Valid credentials of this app naming another app's objects: each must be answered as an absent
// object of the same shape is (no existence oracle), show nothing of it, and leave it as it was.
t.test("another app's objects named with this app's credentials answer as absent ones", async (t) => {
  const theirs = { id: other.id, key: otherCredential.key, secret: otherCredential.secret };
  const asThem = (method: string, path: string, body?: unknown) =>
    server.request(method, `/applications/${other.id}${path}`, { app: theirs, body });
  for (const userId of ['twin', 'b-only']) {
    t.equal((await asThem('PUT', `/users/${userId}/data`, { data: { email: `${userId}@b.example` } })).status, 200);
  }
  const group = (await asThem('POST', '/groups', { name: 'Their crew', admission_policy: 'open' })).body;
  const member = (await asThem('POST', `/groups/${group.id}/members`, { user_id: 'b-only', roles: [] })).body;
  const invite = (await asThem('POST', `/groups/${group.id}/invites`, { user_id: 'twin', roles: [] })).body.invitation;
  const client = (await asThem('POST', '/oidc-clients', { name: 'Their client' })).body;
  const theirState = () =>
    Promise.all(
      [`/groups/${group.id}`, `/groups/${group.id}/members`, `/groups/${group.id}/invites`, '/users/data', `/oidc-clients/${client.id}`].map(
        async (path) => (await asThem('GET', path)).text,
      ),
    );
  const before = await theirState();

  // A user of ours whose ID one of theirs shares (their invite is for their `twin`), owner of a group of ours.
  const twin = await tokenFor(server, { user_id: 'twin' });
  const ours = (await server.request('POST', '/me/groups', { token: twin.token, body: { name: 'Our crew' } })).body.group;

  /** Path parameters naming their objects, each with an absent one of the same shape. */
  const named: Record<string, [string, string]> = {
    user: ['b-only', 'nobody'],
    group: [group.id, sampleValue('group')],
    member: [member.id, sampleValue('member')],
    invite: [invite.id, sampleValue('invite')],
    client: [client.id, sampleValue('client')],
    client_id: [client.credentials[0].client_id, 'oc_ZZZZZZZZZZZZZZZZZZZZZZZZ'],
  };
  const theirIds = [other.id, ...Object.values(named).map(([id]) => id)].filter((id) => id !== 'b-only');
  type Ask = { path: string; body?: unknown };
  const compare = async (label: string, method: string, [foreign, absent]: [Ask, Ask], token?: string) => {
    const auth = token ? { token } : { app: server.app };
    const seen = await server.request(method, foreign.path, { ...auth, body: foreign.body });
    const missing = await server.request(method, absent.path, { ...auth, body: absent.body });
    t.equal(seen.status, missing.status, `${label}: the status of an absent object`);
    // A refusal may echo the ID it was asked about: the same refusal, with the other ID in it.
    const echoed = Object.values(named).reduce((text, [id, absentId]) => text.replaceAll(id, absentId), seen.text);
    if (seen.status >= 400) t.equal(echoed, missing.text, `${label}: the answer about an absent object`);
    else for (const id of theirIds) t.notMatch(seen.text, id, `${label}: nothing of the other app shows`);
  };
  const withEach = (ask: (which: 0 | 1) => Ask): [Ask, Ask] => [ask(0), ask(1)];
  const fill = (path: string, which: 0 | 1) =>
    path.replace(/:([a-z_]+)/gi, (_m, name: string) => (name === 'app' ? server.app.id : (named[name]?.[which] ?? 'email')));

  t.test('their IDs in bodies and filters', async (t) => {
    const path = `/applications/${server.app.id}`;
    const user = (which: 0 | 1) => named.user[which];
    const groupId = (which: 0 | 1) => named.group[which];
    const cases: Array<[string, string, (which: 0 | 1) => Ask]> = [
      ['POST', 'a member by their user', (w) => ({ path: `${path}/groups/${ours.id}/members`, body: { user_id: user(w), roles: [] } })],
      ['POST', 'an invite of their user', (w) => ({ path: `${path}/groups/${ours.id}/invites`, body: { user_id: user(w), roles: [] } })],
      ['POST', 'an invite on /me of their user', (w) => ({ path: `/me/groups/${ours.id}/invites`, body: { user_id: user(w), roles: [] } })],
      ['GET', 'users by their ID', (w) => ({ path: `${path}/users/data?id_filter=${user(w)}` })],
      ['GET', 'users by their address', (w) => ({ path: `${path}/users/data?lookup_filter=${user(w)}@b.example` })],
      ['GET', 'members by their user', (w) => ({ path: `${path}/groups/${ours.id}/members?lookup_filter=${user(w)}` })],
      ['GET', 'invites of their user', (w) => ({ path: `${path}/groups/${ours.id}/invites?ensured_user_id=${user(w)}` })],
      ['GET', 'groups by their ID', (w) => ({ path: `${path}/groups?lookup_filter=${groupId(w)}` })],
      ['GET', 'groups by their name', (w) => ({ path: `${path}/groups?lookup_filter=${w === 0 ? 'Their%20crew' : 'Nobody%27s%20crew'}` })],
      ['GET', 'groups after their cursor', (w) => ({ path: `${path}/groups?after=${groupId(w)}` })],
      [
        'POST',
        'a link joining their group',
        (w) => ({ path: '/hub/auth/magic', body: { verification_type: 'email', data: { email: 'joiner@example.com' }, group_to_join: groupId(w) } }),
      ],
    ];
    for (const [method, label, ask] of cases) await compare(label, method, withEach(ask), label.includes('/me') ? twin.token : undefined);
  });

  t.test('their IDs in every platform path', async (t) => {
    for (const route of buildRoutes(deps).filter((r) => r.path.startsWith('/applications/'))) {
      const body = route.method === 'GET' || route.method === 'DELETE' ? undefined : {};
      await compare(`${route.method} ${route.path}`, route.method, withEach((w) => ({ path: fill(route.path, w), body })));
    }
  });

  t.test('their IDs in every /me group path', async (t) => {
    for (const route of buildRoutes(deps).filter((r) => r.path.startsWith('/me/groups/'))) {
      const body = route.method === 'GET' || route.method === 'DELETE' ? undefined : {};
      await compare(`${route.method} ${route.path}`, route.method, withEach((w) => ({ path: fill(route.path, w), body })), twin.token);
    }
  });

  t.test('their objects are as they were', async (t) => {
    t.same(await theirState(), before);
  });
});

// Every /me group route × each standing a user may have in the group of the path (ADDENDUM §5 and
// API.md "/me rights"): only refusals and reads are asked, and the group is left as it was.
t.test('/me group routes answer each standing in the group as API.md says, and change nothing they refuse', async (t) => {
  const app = server.app;
  const base = `/applications/${app.id}`;
  const owner = await tokenFor(server, { email: 'g-owner@example.com' });
  const member = await tokenFor(server, { email: 'g-member@example.com' });
  const pending = await tokenFor(server, { email: 'g-pending@example.com' });
  const rejected = await tokenFor(server, { email: 'g-rejected@example.com' });
  const stranger = await tokenFor(server, { email: 'g-stranger@example.com' });
  const foreign = await tokenFor(server, { email: 'g-owner@example.com' }, other.id);
  const group = (await server.request('POST', '/me/groups', { token: owner.token, body: { name: 'Standing' } })).body.group;
  const g = `/me/groups/${group.id}`;
  const added = (await server.request('POST', `${base}/groups/${group.id}/members`, { app, body: { user_id: member.userId, roles: ['editor'] } })).body;
  const inviteOf = async (userId: string) =>
    (await server.request('POST', `${base}/groups/${group.id}/invites`, { app, body: { user_id: userId, roles: [] } })).body.invitation;
  const pendingInvite = await inviteOf(pending.userId);
  const rejectedInvite = await inviteOf(rejected.userId);
  t.equal((await server.request('POST', `${g}/invites/${rejectedInvite.id}/reject`, { token: rejected.token })).status, 200);
  const members = (await server.request('GET', `${base}/groups/${group.id}/members`, { app })).body.results;
  const memberOf = (userId: string) => members.find((m: any) => m.user_id === userId).id;
  const ownerMember = memberOf(owner.userId);
  const pendingMember = memberOf(pending.userId);
  const rejectedMember = memberOf(rejected.userId);
  const state = () =>
    Promise.all([``, `/members`, `/invites`].map(async (path) => (await server.request('GET', `${base}/groups/${group.id}${path}`, { app })).text));
  const before = await state();

  const callers = { stranger, foreign, member, pending, rejected, owner };
  type Who = keyof typeof callers;
  const notFound = [404, 'E_GROUP_NOT_FOUND'] as const;
  const forbidden = [403, 'E_FORBIDDEN'] as const;
  /** An invite of someone else, to a member who may not see it: answered as a missing one. */
  const hidden = [404, 'E_INVITE_NOT_FOUND'] as const;
  const ok = [200] as const;
  /** Strangers and another app's users never see the group; the rest as listed (absent: not asked). */
  const cases: Array<[string, string, unknown, Partial<Record<Who, readonly [number, string?]>>]> = [
    ['GET', g, undefined, { member: ok, pending: ok, rejected: ok, owner: ok }],
    ['PUT', g, { name: 'Taken' }, { member: forbidden, pending: forbidden, rejected: forbidden }],
    ['DELETE', g, undefined, { member: forbidden, pending: forbidden, rejected: forbidden }],
    ['GET', `${g}/members`, undefined, { member: ok, pending: forbidden, rejected: forbidden, owner: ok }],
    ['GET', `${g}/members/${ownerMember}`, undefined, { member: ok, pending: forbidden, rejected: forbidden, owner: ok }],
    ['GET', `${g}/members/${pendingMember}`, undefined, { member: ok, pending: ok, rejected: forbidden, owner: ok }],
    ['POST', `${g}/members`, { user_id: stranger.userId, roles: [] }, { member: forbidden, pending: forbidden, rejected: forbidden }],
    ['PUT', `${g}/members/${added.id}`, { roles: ['owner'] }, { member: forbidden, pending: forbidden, rejected: forbidden }],
    ['DELETE', `${g}/members/${ownerMember}`, undefined, { member: forbidden, pending: forbidden, rejected: forbidden }],
    ['GET', `${g}/invites`, undefined, { member: ok, pending: ok, rejected: ok, owner: ok }],
    ['GET', `${g}/invites/${pendingInvite.id}`, undefined, { member: hidden, pending: ok, rejected: hidden, owner: ok }],
    ['POST', `${g}/invites`, { user_id: stranger.userId, roles: [] }, { member: forbidden, pending: forbidden, rejected: forbidden }],
    ['PUT', `${g}/invites/${pendingInvite.id}`, { roles: ['owner'] }, { member: forbidden, pending: forbidden, rejected: forbidden }],
    ['DELETE', `${g}/invites/${pendingInvite.id}`, undefined, { member: forbidden, pending: forbidden, rejected: forbidden }],
    ['POST', `${g}/invites/${pendingInvite.id}/accept`, undefined, { member: hidden, rejected: hidden, owner: forbidden }],
    ['POST', `${g}/invites/${pendingInvite.id}/reject`, undefined, { member: hidden, rejected: hidden, owner: forbidden }],
    ['POST', `${g}/invites/${rejectedInvite.id}/accept`, undefined, { member: hidden, pending: hidden, owner: forbidden }],
  ];
  for (const [method, path, body, expected] of cases) {
    for (const [who, caller] of Object.entries(callers) as Array<[Who, typeof owner]>) {
      const want = who === 'stranger' || who === 'foreign' ? notFound : expected[who];
      if (!want) continue;
      const response = await server.request(method, path, { token: caller.token, body });
      const label = `${method} ${path.replace(/[a-z]+_[0-9A-Z]{26}/g, (id) => id.split('_')[0])} as ${who}`;
      t.equal(response.status, want[0], `${label}: ${want[0]}`);
      if (want[1]) t.equal(response.body?.code, want[1], `${label}: ${want[1]}`);
      t.notMatch(response.text, other.id, `${label}: nothing of another app`);
    }
  }
  // Another group's members and invites named under this group's path (by its owner, or by an invitee of both): absent here.
  const elsewhere = (await server.request('POST', '/me/groups', { token: stranger.token, body: { name: 'Elsewhere' } })).body;
  const theirInvite = (await server.request('POST', `${base}/groups/${elsewhere.group.id}/invites`, { app, body: { user_id: pending.userId, roles: [] } })).body.invitation;
  const elsewhereState = () => server.request('GET', `${base}/groups/${elsewhere.group.id}/members`, { app }).then((r) => r.text);
  const elsewhereBefore = await elsewhereState();
  const crossed: Array<[string, string, unknown, typeof owner, string]> = [
    ['GET', `${g}/members/${elsewhere.member.id}`, undefined, owner, 'E_MEMBER_NOT_FOUND'],
    ['PUT', `${g}/members/${elsewhere.member.id}`, { roles: [] }, owner, 'E_MEMBER_NOT_FOUND'],
    ['DELETE', `${g}/members/${elsewhere.member.id}`, undefined, owner, 'E_MEMBER_NOT_FOUND'],
    ['GET', `${g}/invites/${theirInvite.id}`, undefined, owner, 'E_INVITE_NOT_FOUND'],
    ['PUT', `${g}/invites/${theirInvite.id}`, { roles: [] }, owner, 'E_INVITE_NOT_FOUND'],
    ['DELETE', `${g}/invites/${theirInvite.id}`, undefined, owner, 'E_INVITE_NOT_FOUND'],
    ['POST', `${g}/invites/${theirInvite.id}/accept`, undefined, pending, 'E_INVITE_NOT_FOUND'],
  ];
  for (const [method, path, body, caller, code] of crossed) {
    const response = await server.request(method, path, { token: caller.token, body });
    t.match({ status: response.status, code: response.body?.code }, { status: 404, code }, `${method} another group's ${code.split('_')[1].toLowerCase()} under this group`);
  }
  t.equal(await elsewhereState(), elsewhereBefore, 'the other group is as it was');
  // The rejected member's own invite and member stay readable to it; the pending member's list holds its invite alone.
  t.equal((await server.request('GET', `${g}/members/${rejectedMember}`, { token: rejected.token })).status, 200);
  const theirs = await server.request('GET', `${g}/invites`, { token: pending.token });
  t.same(theirs.body.results.map((i: any) => i.id), [pendingInvite.id]);
  t.same(await state(), before, 'the group, its members and invites are as they were');
});
