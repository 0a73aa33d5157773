import t from 'tap';
import { startServer, type TestResponse } from '../../helpers/server.js';
import { as, person, platform } from './helpers.js';

// A misspelt key (`admission_polcy`, `role` beside `roles`) was once dropped unsaid: the write answered 200
// without it, and a PUT, which replaces, even cleared what the key was meant to set.
t.test('every group, member and invite body refuses an unknown key (400 naming it) and changes nothing', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const [ada, bob, dan] = await Promise.all(['ada', 'bob', 'dan'].map((name) => person(server, `${name}@example.com`)));
  const owner = as(server, ada);
  const made = async (pending: Promise<TestResponse>) => {
    const res = await pending;
    if (res.status !== 200) throw new Error(`setup answered ${res.status}: ${res.text}`);
    return res.body;
  };

  // Every documented field, optional ones included, is taken.
  const theirs = await made(api.post('/groups', { name: 'Theirs', admission_policy: 'open', meta: { a: 1 } }));
  const app = `/groups/${theirs.id}`;
  const member = await made(api.post(`${app}/members`, { user_id: bob.userId, roles: ['reader'], state: 'active' }));
  const invite = (
    await made(api.post(`${app}/invites`, { email: 'cat@example.com', roles: ['member'], redirect_url: '/welcome', app_variant_id: 'web' }))
  ).invitation;
  const mine = (await made(owner.post('/me/groups', { name: 'Mine', admission_policy: 'invite_only', meta: {} }))).group;
  const me = `/me/groups/${mine.id}`;
  const myMember = await made(owner.post(`${me}/members`, { phone: '+15550100', roles: ['reader'] }));
  const myInvite = (
    await made(owner.post(`${me}/invites`, { user_id: dan.userId, roles: ['member'], redirect_url: 'https://example.com/in', app_variant_id: 'web' }))
  ).invitation;

  const state = async () => {
    const reads = ['/groups'];
    for (const group of [theirs.id, mine.id]) reads.push(`/groups/${group}`, `/groups/${group}/members`, `/groups/${group}/invites`);
    return Promise.all(reads.map(async (path) => (await api.get(path)).text));
  };
  const before = await state();

  const rawJson = (body: string) => ({ token: ada.token, rawBody: body, headers: { 'content-type': 'application/json' } });
  const cases: Array<[string, () => Promise<TestResponse>, string]> = [
    ['platform group create', () => api.post('/groups', { name: 'Typo', admission_polcy: 'open' }), 'admission_polcy'],
    ['platform group update', () => api.put(app, { name: 'Renamed', admision_policy: 'invite_only' }), 'admision_policy'],
    ['platform member create', () => api.post(`${app}/members`, { email: 'eve@example.com', roles: [], stat: 'invite_pending' }), 'stat'],
    // `state` is a member's read-only field, taken and ignored (a read sent back); `rank` is not one.
    ['platform member update', () => api.put(`${app}/members/${member.id}`, { roles: ['owner', 'editor'], state: 'invite_rejected', rank: 1 }), 'rank'],
    ['platform invite create', () => api.post(`${app}/invites`, { email: 'fay@example.com', roles: [], redirect_uri: '/x' }), 'redirect_uri'],
    ['platform invite update', () => api.put(`${app}/invites/${invite.id}`, { email: 'cat@example.com', roles: [], app_variant: 'web' }), 'app_variant'],
    ['/me group create', () => owner.post('/me/groups', { name: 'Typo', metadata: { a: 1 } }), 'metadata'],
    ['/me group create, a __proto__ key', () => server.request('POST', '/me/groups', rawJson('{"name": "Typo", "__proto__": {}}')), '__proto__'],
    ['/me group update', () => owner.put(me, { name: 'Renamed', meta: {}, policy: 'open' }), 'policy'],
    ['/me member create', () => owner.post(`${me}/members`, { user_id: bob.userId, roles: [], role: 'admin' }), 'role'],
    ['/me member update', () => owner.put(`${me}/members/${myMember.id}`, { roles: ['admin'], rolse: ['x'] }), 'rolse'],
    ['/me invite create', () => owner.post(`${me}/invites`, { email: 'gus@example.com', roles: [], redirect_ulr: '/' }), 'redirect_ulr'],
    ['/me invite update', () => owner.put(`${me}/invites/${myInvite.id}`, { user_id: dan.userId, roles: ['admin'], redirect: '/' }), 'redirect'],
    ['/me invite accept', () => as(server, dan).post(`${me}/invites/${myInvite.id}/accept`, { roles: ['owner'] }), 'roles'],
    ['/me invite reject', () => as(server, dan).post(`${me}/invites/${myInvite.id}/reject`, { reason: 'busy' }), 'reason'],
  ];
  for (const [label, send, key] of cases) {
    const res = await send();
    t.equal(res.status, 400, `${label}: ${res.text}`);
    t.equal(res.body.code, 'E_VALIDATION', label);
    t.same(res.body.field_errors, { [key]: ['is not a known field'] }, `${label}: names ${key}`);
    t.same(await state(), before, `${label}: nothing changed`);
  }

  const accepted = await as(server, dan).post(`${me}/invites/${myInvite.id}/accept`, {});
  t.equal(accepted.status, 200, 'an answer with an empty object is taken');
  t.equal(accepted.body.member.state, 'active');
});
