import t from 'tap';
import { startServer, type TestApp, type TestResponse, type TestServer } from '../helpers/server.js';
import { as, person, platform } from './groups/helpers.js';

// Properties every paged list holds: a cursor names a position in its own list only.

async function otherApp(server: TestServer): Promise<TestApp> {
  const app = await server.deps.apps.create('other');
  const credential = await server.deps.apps.createCredential(app.id);
  return { id: app.id, key: credential.key, secret: credential.secret };
}

const ok = (res: TestResponse) => {
  if (res.status !== 200 && res.status !== 204) throw new Error(`answered ${res.status}: ${res.text}`);
  return res.body;
};

t.test('a cursor taken from another list is refused, or names a position only: nothing of the other list shows', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const mine = ok(await as(server, ada).post('/me/groups', { name: 'Mine' }));
  const group = ok(await api.post('/groups', { name: 'Crew' }));
  const member = ok(await api.post(`/groups/${group.id}/members`, { user_id: ada.userId, roles: [] }));
  const invite = ok(await api.post(`/groups/${group.id}/invites`, { email: 'bea@example.com', roles: [] })).invitation;

  const wrongKind: [string, () => Promise<TestResponse>][] = [
    ['groups after a member', () => api.get(`/groups?after=${member.id}`)],
    ['groups after an invite', () => api.get(`/groups?after=${invite.id}`)],
    ['members after a group', () => api.get(`/groups/${group.id}/members?after=${group.id}`)],
    ['members after an invite', () => api.get(`/groups/${group.id}/members?after=${invite.id}`)],
    ['invites after a member', () => api.get(`/groups/${group.id}/invites?after=${member.id}`)],
    ['/me groups after a member', () => as(server, ada).get(`/me/groups?after=${mine.member.id}`)],
    ['/me members after an invite', () => as(server, ada).get(`/me/groups/${mine.group.id}/members?after=${invite.id}`)],
    ['/me invites after a group', () => as(server, ada).get(`/me/groups/${mine.group.id}/invites?after=${mine.group.id}`)],
  ];
  for (const [label, read] of wrongKind) {
    const res = await read();
    t.equal(res.status, 400, label);
    t.match(res.body, { statusCode: 400, error: 'Bad Request', code: 'E_VALIDATION', messages: [String], field_errors: { after: [String] } }, `${label}: ADDENDUM §7 body`);
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
