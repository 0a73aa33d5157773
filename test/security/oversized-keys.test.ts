import t from 'tap';
import { startServer } from '../helpers/server.js';
import { storeDigest } from '../helpers/store-digest.js';

// Values that end up in LMDB keys (addresses, filters, IDs) must be refused before they reach a key:
// LMDB keys hold at most ~2 KB, and an overflow would surface as a 500 or a failed commit.
t.test('oversized addresses and lookup values are refused with a 4xx and change nothing', async (t) => {
  const server = await startServer(t);
  const { app } = server;
  const huge = 'x'.repeat(3000);
  const group = await server.request('POST', `/applications/${app.id}/groups`, { app, body: { name: 'Long addresses' } });
  t.equal(group.status, 200);
  const before = storeDigest(server.deps.store);
  const cases: Array<[string, string, unknown, number]> = [
    ['PUT', `/applications/${app.id}/users/u1/data`, { data: { email: `${huge}@example.com` } }, 400],
    ['PUT', `/applications/${app.id}/users/u1/data`, { data: { phone_number: huge } }, 400],
    ['POST', '/hub/auth/magic', { verification_type: 'email', data: { email: `${huge}@example.com` } }, 400],
    ['GET', `/applications/${app.id}/users/data?lookup_filter=${huge}@example.com`, undefined, 400],
    ['GET', `/applications/${app.id}/users/data?id_filter=${huge}`, undefined, 400],
    ['GET', `/applications/${app.id}/users/${huge}/data`, undefined, 404],
    ['GET', `/applications/${app.id}/groups?lookup_filter=${huge}`, undefined, 400],
    ['GET', `/applications/${app.id}/oidc-clients/${huge}`, undefined, 404],
    // Longer than an email address may be anywhere (254), though short enough for a key: one rule everywhere.
    ['POST', `/applications/${app.id}/groups/${group.body.id}/members`, { email: `${'m'.repeat(250)}@example.com`, roles: [] }, 400],
    ['PUT', `/applications/${app.id}/users/u1/data`, { data: { email: `${'m'.repeat(250)}@example.com` } }, 400],
  ];
  for (const [method, path, body, status] of cases) {
    const res = await server.request(method, path, { app, body });
    t.equal(res.status, status, `${method} ${path.slice(0, 60)}… → ${status}`);
    t.match(res.body, { statusCode: status, code: /^E_/ });
  }
  t.equal(storeDigest(server.deps.store), before, 'nothing was written');
});

// Past LMDB's key size (~4 kB), which the 3000 characters above stay under: a lookup by such a key threw (500).
t.test('IDs and keys past LMDB key size, in a path or a header, name nothing: 4xx, never 500', async (t) => {
  const adminToken = 'admin-token-0123456789';
  const server = await startServer(t, { env: { SVC_ADMIN_TOKEN: adminToken } });
  const { app } = server;
  const huge = 'k'.repeat(8000);
  const admin = { authorization: `Bearer ${adminToken}` };
  const before = storeDigest(server.deps.store);
  const cases: Array<[string, string, Record<string, string>, number, string]> = [
    ['GET', `/applications/${app.id}/users/data`, { 'x-svc-app-key': huge, 'x-svc-app-secret': app.secret }, 401, 'E_UNAUTHORIZED'],
    ['GET', '/hub/app-config', { 'x-svc-app-key': huge }, 401, 'E_UNAUTHORIZED'],
    ['GET', `/admin/applications/${huge}`, admin, 404, 'E_APPLICATION_NOT_FOUND'],
    ['PATCH', `/admin/applications/${huge}`, admin, 404, 'E_APPLICATION_NOT_FOUND'],
    ['GET', `/admin/applications/${huge}/credentials`, admin, 404, 'E_APPLICATION_NOT_FOUND'],
    ['POST', `/admin/applications/${huge}/credentials`, admin, 404, 'E_APPLICATION_NOT_FOUND'],
    ['DELETE', `/admin/applications/${huge}/credentials/key_x`, admin, 404, 'E_APPLICATION_NOT_FOUND'],
    ['DELETE', `/admin/applications/${app.id}/credentials/${huge}`, admin, 404, 'E_CREDENTIAL_NOT_FOUND'],
  ];
  for (const [method, path, headers, status, code] of cases) {
    const body = method === 'PATCH' ? { name: 'renamed' } : undefined;
    const res = await server.request(method, path, { headers, body });
    t.equal(res.status, status, `${method} ${path.slice(0, 60)}… → ${status}`);
    t.match(res.body, { statusCode: status, code });
  }
  t.equal(storeDigest(server.deps.store), before, 'nothing was written');
});

t.test('an OIDC client ID past LMDB key size names no client: 404, never 500', async (t) => {
  const server = await startServer(t);
  const { app } = server;
  const huge = `oidc_client_${'k'.repeat(8000)}`;
  const before = storeDigest(server.deps.store);
  const cases: Array<[string, string, unknown]> = [
    ['GET', `/applications/${app.id}/oidc-clients/${huge}`, undefined],
    ['PUT', `/applications/${app.id}/oidc-clients/${huge}`, { name: 'renamed' }],
    ['DELETE', `/applications/${app.id}/oidc-clients/${huge}`, undefined],
    ['POST', `/applications/${app.id}/oidc-clients/${huge}/credentials`, {}],
    ['DELETE', `/applications/${app.id}/oidc-clients/${huge}/credentials/oc_x`, undefined],
  ];
  for (const [method, path, body] of cases) {
    const res = await server.request(method, path, { app, body });
    t.equal(res.status, 404, `${method} ${path.slice(0, 60)}… → 404`);
    t.match(res.body, { statusCode: 404, code: 'E_OIDC_CLIENT_NOT_FOUND' });
  }
  t.equal(storeDigest(server.deps.store), before, 'nothing was written');
});
