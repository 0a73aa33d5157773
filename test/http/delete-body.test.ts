import t from 'tap';
import { startServer, type TestServer } from '../helpers/server.js';
import { tokenFor } from '../helpers/tokens.js';

const ADMIN_TOKEN = 'admin-token-0123456789abcdef';

/** Each DELETE route of the service with a resource to delete and a read that tells whether it is still there. */
async function deletables(server: TestServer) {
  const { app } = server;
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const owner = await tokenFor(server, { email: 'ada@example.com' });
  const member = await tokenFor(server, { email: 'bob@example.com' });
  const group = (await server.request('POST', '/me/groups', { token: owner.token, body: { name: 'Crew' } })).body.group;
  const groups = `/applications/${app.id}/groups`;
  const bob = (await server.request('POST', `${groups}/${group.id}/members`, { app, body: { user_id: member.userId, roles: [] } })).body;
  const invite = (await server.request('POST', `${groups}/${group.id}/invites`, { app, body: { roles: [], email: 'cy@example.com' } })).body.invitation;
  const other = (await server.request('POST', groups, { app, body: { name: 'Other' } })).body;
  const client = (await server.request('POST', `/applications/${app.id}/oidc-clients`, { app, body: { name: 'Web' } })).body;
  const credential = (await server.request('POST', `/admin/applications/${app.id}/credentials`, { headers: admin })).body;
  await server.request('PUT', `/applications/${app.id}/users/gone/data`, { app, body: { data: {} } });
  const clientPath = `/applications/${app.id}/oidc-clients/${client.id}`;
  return [
    { path: `/applications/${app.id}/users/gone/data`, auth: { app } },
    { path: `${groups}/${other.id}`, auth: { app } },
    { path: `${groups}/${group.id}/invites/${invite.id}`, auth: { app } },
    { path: `/me/groups/${group.id}/members/${bob.id}`, auth: { token: member.token } },
    { path: `${clientPath}/credentials/${client.credentials[0].client_id}`, auth: { app }, read: clientPath, gone: (body: any) => body.credentials.length === 0 },
    { path: clientPath, auth: { app } },
    {
      path: `/admin/applications/${app.id}/credentials/${credential.key}`,
      auth: { headers: admin },
      read: `/admin/applications/${app.id}/credentials`,
      gone: (body: any) => !body.results.some((c: { key: string }) => c.key === credential.key),
    },
  ];
}

t.test('a DELETE refuses a body that carries anything (as a query it does not take), and deletes nothing', async (t) => {
  const server = await startServer(t, { env: { SVC_ADMIN_TOKEN: ADMIN_TOKEN } });
  for (const { path, auth, read, gone } of await deletables(server)) {
    const readIt = () => server.request('GET', read ?? path, auth);
    const stillThere = async () => {
      const res = await readIt();
      return res.status === 200 && !(gone?.(res.body) ?? false);
    };
    t.ok(await stillThere(), `${path}: there to begin with`);

    const dryRun = await server.request('DELETE', path, { ...auth, body: { dry_run: true } });
    t.equal(dryRun.status, 400, `${path}: a body with a field`);
    t.equal(dryRun.body.code, 'E_VALIDATION');
    t.same(dryRun.body.field_errors, { dry_run: ['is not a known field'] });
    const text = await server.request('DELETE', path, { ...auth, rawBody: 'soft', headers: { ...auth.headers, 'content-type': 'text/plain' } });
    t.equal(text.status, 415, `${path}: a body of another media type`);
    const notObject = await server.request('DELETE', path, { ...auth, body: [] });
    t.equal(notObject.status, 400, `${path}: a JSON body that is no object`);
    t.ok(await stillThere(), `${path}: nothing was deleted`);

    const empty = await server.request('DELETE', path, { ...auth, body: {} });
    t.equal(empty.status, 204, `${path}: {} carries nothing`);
    t.notOk(await stillThere(), `${path}: deleted`);
  }
});
