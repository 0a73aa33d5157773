import t, { type Test } from 'tap';
import { startServer, type TestApp, type TestResponse, type TestServer } from '../helpers/server.js';
import { as, person, platform } from './groups/helpers.js';
import { manualClock } from '../../src/lib/clock.js';

// Properties every paged list holds: a cursor names a position in its own list only, paging while
// items come and go never repeats one nor skips one that lived throughout, and the total agrees with
// the items at the end.

async function otherApp(server: TestServer): Promise<TestApp> {
  const app = await server.deps.apps.create('other');
  const credential = await server.deps.apps.createCredential(app.id);
  return { id: app.id, key: credential.key, secret: credential.secret };
}

const ok = (res: TestResponse) => {
  if (res.status !== 200 && res.status !== 204) throw new Error(`answered ${res.status}: ${res.text}`);
  return res.body;
};

/** One list as the walk sees it, with what makes and removes its items. */
interface Listed {
  name: string;
  get(query: string): Promise<TestResponse>;
  idOf(item: any): string;
  create(): Promise<string>;
  remove(id: string): Promise<TestResponse>;
  /** Items that may not be removed (a group's last owner). */
  kept?: ReadonlySet<string>;
}

const PAGE = 3;

/** Every page of `list` in turn, `between` run after each full one; its IDs and the totals it answered. */
async function pageThrough(list: Listed, sort: string, between: (seen: string[]) => Promise<void> = async () => {}) {
  const seen: string[] = [];
  const totals = new Set<number>();
  let after: string | undefined;
  for (;;) {
    const page = ok(await list.get(`page_size=${PAGE}${sort}${after ? `&after=${encodeURIComponent(after)}` : ''}`));
    const ids: string[] = page.results.map(list.idOf);
    seen.push(...ids);
    totals.add(page.total_results);
    if (ids.length < PAGE) return { seen, totals: [...totals] };
    after = ids[ids.length - 1];
    await between(seen);
  }
}

/**
 * Pages through `list` while, between pages, the cursor's item and one not yet reached are removed
 * and two items are created; then pages through it again, unchanged.
 */
async function checkList(t: Test, list: Listed, sort = '') {
  const label = `${list.name}${sort}`;
  for (let i = 0; i < 10; i++) await list.create();
  const initial = (await pageThrough(list, sort)).seen;
  const removed = new Set<string>();
  const removable = (id: string | undefined): id is string => id !== undefined && !removed.has(id) && !list.kept?.has(id);
  const { seen } = await pageThrough(list, sort, async (seenSoFar) => {
    const ahead = initial.filter((id) => !seenSoFar.includes(id) && removable(id)).at(-1);
    for (const id of [seenSoFar.at(-1), ahead].filter(removable)) {
      ok(await list.remove(id));
      removed.add(id);
    }
    await list.create();
    await list.create();
  });
  t.equal(new Set(seen).size, seen.length, `${label}: no item twice`);
  t.same(initial.filter((id) => !removed.has(id) && !seen.includes(id)), [], `${label}: every item that lived throughout was seen`);
  t.ok(removed.size >= 4, `${label}: items were removed while paging (${removed.size})`);

  const after = await pageThrough(list, sort);
  t.same(after.totals, [after.seen.length], `${label}: the total agrees with the items paged to the end`);
  t.same(after.seen.filter((id) => removed.has(id)), [], `${label}: removed items are gone`);
}

t.test('every list pages consistently while items are created and deleted between pages', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const appPath = `/applications/${server.app.id}`;
  let made = 0;
  const newUser = async (data: Record<string, unknown> = {}) => ok(await api.put(`/users/${`u${(made++ * 7919) % 1000}x${made}`}/data`, { data })).svc_user as string;

  const users: Listed = {
    name: 'users',
    get: (query) => api.get(`/users/data?${query}`),
    idOf: (profile) => profile.svc_user,
    create: () => newUser(),
    remove: (id) => api.del(`/users/${encodeURIComponent(id)}/data`),
  };
  await checkList(t, users);
  await checkList(t, users, '&sort=desc');

  const shared: Listed = {
    ...users,
    name: 'users by lookup_filter',
    get: (query) => api.get(`/users/data?lookup_filter=shared@example.com&include_duplicates=true&${query}`),
    create: () => newUser({ email: 'Shared@example.com' }),
  };
  await checkList(t, shared);
  await checkList(t, shared, '&sort=desc');

  await checkList(t, {
    name: 'groups',
    get: (query) => api.get(`/groups?${query}`),
    idOf: (group) => group.id,
    create: async () => ok(await api.post('/groups', { name: 'Crew' })).id,
    remove: (id) => api.del(`/groups/${id}`),
  });
  await checkList(t, {
    name: 'groups by lookup_filter',
    get: (query) => api.get(`/groups?lookup_filter=twins&${query}`),
    idOf: (group) => group.id,
    create: async () => ok(await api.post('/groups', { name: 'Twins' })).id,
    remove: (id) => api.del(`/groups/${id}`),
  });

  const group = ok(await api.post('/groups', { name: 'Members' }));
  const owner = ok(await api.post(`/groups/${group.id}/members`, { user_id: await newUser(), roles: [] }));
  await checkList(t, {
    name: 'members',
    get: (query) => api.get(`/groups/${group.id}/members?${query}`),
    idOf: (member) => member.id,
    create: async () => ok(await api.post(`/groups/${group.id}/members`, { user_id: await newUser(), roles: [] })).id,
    remove: (id) => api.del(`/groups/${group.id}/members/${id}`),
    kept: new Set([owner.id]),
  });
  await checkList(t, {
    name: 'invites',
    get: (query) => api.get(`/groups/${group.id}/invites?${query}`),
    idOf: (invite) => invite.id,
    create: async () => ok(await api.post(`/groups/${group.id}/invites`, { user_id: await newUser(), roles: [] })).invitation.id,
    remove: (id) => api.del(`/groups/${group.id}/invites/${id}`),
  });

  const clients: Listed = {
    name: 'OIDC clients',
    get: (query) => server.request('GET', `${appPath}/oidc-clients?${query}`, { app: server.app }),
    idOf: (client) => client.id,
    create: async () => ok(await server.request('POST', `${appPath}/oidc-clients`, { app: server.app, body: { name: 'Web' } })).id,
    remove: (id) => server.request('DELETE', `${appPath}/oidc-clients/${id}`, { app: server.app }),
  };
  await checkList(t, clients);
  await checkList(t, clients, '&sort=desc');

  const ada = await person(server, 'ada@example.com');
  await checkList(t, {
    name: '/me groups',
    get: (query) => as(server, ada).get(`/me/groups?${query}`),
    idOf: (pair) => pair.group.id,
    create: async () => ok(await as(server, ada).post('/me/groups', { name: 'Mine' })).group.id,
    remove: (id) => as(server, ada).del(`/me/groups/${id}`),
  });
});

t.test('a cursor taken from another list is refused, or names a position only: nothing of the other list shows', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const mine = ok(await as(server, ada).post('/me/groups', { name: 'Mine' }));
  const group = ok(await api.post('/groups', { name: 'Crew' }));
  const member = ok(await api.post(`/groups/${group.id}/members`, { user_id: ada.userId, roles: [] }));
  const invite = ok(await api.post(`/groups/${group.id}/invites`, { email: 'bea@example.com', roles: [] })).invitation;

  // Each refusal names the kind of ID its list pages by, in the same words on every list.
  const wrongKind: [string, string, () => Promise<TestResponse>][] = [
    ['groups after a member', 'group', () => api.get(`/groups?after=${member.id}`)],
    ['groups after an invite', 'group', () => api.get(`/groups?after=${invite.id}`)],
    ['members after a group', 'member', () => api.get(`/groups/${group.id}/members?after=${group.id}`)],
    ['members after an invite', 'member', () => api.get(`/groups/${group.id}/members?after=${invite.id}`)],
    ['invites after a member', 'invite', () => api.get(`/groups/${group.id}/invites?after=${member.id}`)],
    ['/me groups after a member', 'group', () => as(server, ada).get(`/me/groups?after=${mine.member.id}`)],
    ['/me members after an invite', 'member', () => as(server, ada).get(`/me/groups/${mine.group.id}/members?after=${invite.id}`)],
    ['/me invites after a group', 'invite', () => as(server, ada).get(`/me/groups/${mine.group.id}/invites?after=${mine.group.id}`)],
    ['OIDC clients after a group', 'OIDC client', () => api.get(`/oidc-clients?after=${group.id}`)],
    ['users after no user ID', 'user', () => api.get(`/users/data?after=${'u'.repeat(129)}`)],
  ];
  for (const [label, kind, read] of wrongKind) {
    const res = await read();
    t.equal(res.status, 400, label);
    t.match(res.body, { statusCode: 400, error: 'Bad Request', code: 'E_VALIDATION', messages: [String], field_errors: { after: [String] } }, `${label}: ADDENDUM §7 body`);
    t.same(res.body.field_errors.after, [`must be the ID of a listed ${kind}`], `${label}: names the kind`);
  }

  // A cursor of the right kind from another group, app or user is a position in this list only.
  const otherMember = ok(await as(server, ada).get(`/me/groups/${mine.group.id}/members`)).results[0];
  const crossGroup = ok(await api.get(`/groups/${group.id}/members?after=${otherMember.id}`));
  t.ok(crossGroup.results.every((m: any) => m.group_id === group.id), "another group's member cursor lists this group's members only");

  const other = await otherApp(server);
  for (const id of ['a0', 'zed']) ok(await server.request('PUT', `/applications/${other.id}/users/${id}/data`, { app: other, body: { data: {} } }));
  const crossApp = ok(await server.request('GET', `/applications/${other.id}/users/data?after=${ada.userId}`, { app: other }));
  t.same(crossApp.results.map((p: any) => p.svc_user), ['zed'], "another app's user ID is a position among this app's users");
  const clientsOf = (app: TestApp) => `/applications/${app.id}/oidc-clients`;
  const newClient = async (app: TestApp) => ok(await server.request('POST', clientsOf(app), { app, body: { name: 'Web' } })).id;
  const first = await newClient(server.app);
  const theirs = await newClient(other);
  await newClient(server.app);
  const crossClients = ok(await server.request('GET', `${clientsOf(other)}?after=${first}`, { app: other }));
  t.same(crossClients.results.map((c: any) => c.id), [theirs], "another app's client ID is a position among this app's clients");
});

t.test('ties (equal names, equal creation instants) keep creation order in every read, and desc is its exact reverse', async (t) => {
  // A clock that does not move: every user is created in the same millisecond.
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const api = platform(server);
  const groups = [];
  for (const name of ['Crew', 'crew', 'CREW', 'Crew']) groups.push(ok(await api.post('/groups', { name })).id);
  const users = [];
  for (let i = 0; i < 4; i++) users.push(ok(await api.put('/users/__uuid__/data', { data: { email: 'twin@example.com' } })).svc_user);
  // App-chosen IDs made in one millisecond: the lower ID counts as the older; a later one never does.
  for (const id of ['zed', 'abe']) ok(await api.put(`/users/${id}/data`, { data: { email: 'pair@example.com' } }));
  clock.advance(1);
  ok(await api.put('/users/aaa/data', { data: { email: 'pair@example.com' } }));
  const clients = [];
  for (let i = 0; i < 4; i++) clients.push(ok(await api.post('/oidc-clients', { name: 'Same' })).id);

  for (let read = 0; read < 3; read++) {
    t.same(ok(await api.get('/groups?lookup_filter=crew')).results.map((g: any) => g.id), groups, 'groups of one name: creation order');
    const twins = (query: string) => api.get(`/users/data?lookup_filter=twin@example.com&${query}`);
    t.same(ok(await twins('include_duplicates=true')).results.map((p: any) => p.svc_user), users, 'users of one address: creation order');
    t.same(ok(await twins('include_duplicates=true&sort=desc')).results.map((p: any) => p.svc_user), [...users].reverse(), 'desc: its reverse');
    t.same(ok(await twins('')).results.map((p: any) => p.svc_user), [users[0]], 'without duplicates: the first created');
    t.same(ok(await api.get('/users/data?lookup_filter=pair@example.com')).results.map((p: any) => p.svc_user), ['abe'], 'equal instants: the lower ID');
    t.same(ok(await api.get('/oidc-clients?sort=desc')).results.map((c: any) => c.id), [...clients].reverse(), 'clients of one name, desc');
  }
});
