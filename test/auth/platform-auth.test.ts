import t from 'tap';
import { startServer } from '../helpers/server.js';
import { probePath, platformProbe } from '../helpers/probe.js';

const server = await startServer(t, { extraRoutes: platformProbe });

t.test('the default credential works; missing or wrong headers answer 401', async (t) => {
  const good = await server.request('GET', probePath(server.app.id), { app: server.app });
  t.equal(good.status, 200);
  t.same(good.body, { app: server.app.id });
  const { appKeyHeader, appSecretHeader } = server.deps.config.names;
  const cases: Record<string, string>[] = [
    {},
    { [appKeyHeader]: server.app.key },
    { [appSecretHeader]: server.app.secret },
    { [appKeyHeader]: server.app.key, [appSecretHeader]: server.app.secret + 'x' },
    { [appKeyHeader]: server.app.key, [appSecretHeader]: server.app.secret.slice(0, -1) },
    { [appKeyHeader]: 'key_unknown', [appSecretHeader]: server.app.secret },
  ];
  for (const headers of cases) {
    const res = await server.request('GET', probePath(server.app.id), { headers });
    t.equal(res.status, 401, JSON.stringify(Object.keys(headers)));
    t.equal(res.body.code, 'E_UNAUTHORIZED');
    // RFC 9110 §11.6.1: every 401 names a scheme that would be accepted.
    t.equal(res.headers.get('www-authenticate'), 'AppKey key_header="x-svc-app-key", secret_header="x-svc-app-secret"', 'the challenge names the headers');
  }
});

t.test("a 401 of a route taking the app's key names its headers, under the brand in force", async (t) => {
  const acme = await startServer(t, { env: { SVC_BRAND: 'acme' } });
  const groups = await acme.request('GET', `/applications/${acme.app.id}/groups`);
  t.equal(groups.status, 401);
  t.equal(groups.headers.get('www-authenticate'), 'AppKey key_header="x-acme-app-key", secret_header="x-acme-app-secret"');
  const magic = await acme.request('POST', '/hub/auth/magic', { body: {} });
  t.equal(magic.status, 401);
  t.equal(magic.headers.get('www-authenticate'), 'AppKey key_header="x-acme-app-key", secret_header="x-acme-app-secret"', 'the link route too');
  const config = await acme.request('GET', '/hub/app-config');
  t.equal(config.status, 401);
  t.equal(config.headers.get('www-authenticate'), 'AppKey key_header="x-acme-app-key"', 'app-config takes the key alone');
});

t.test('rotation: several live credentials; a revoked one answers 401 on the very next request', async (t) => {
  const apps = server.deps.apps;
  const second = await apps.createCredential(server.app.id);
  const first = server.app;
  const use = (c: { key: string; secret: string }) =>
    server.request('GET', probePath(server.app.id), { app: { id: server.app.id, ...c } });
  t.equal((await use(first)).status, 200, 'the old credential still works during rotation');
  // Both were just used, so any verification cache is warm before the revocation.
  t.equal((await use(second)).status, 200, 'the new one works at once');
  await apps.revokeCredential(server.app.id, first.key);
  const revoked = await use(first);
  t.equal(revoked.status, 401);
  t.equal(revoked.body.code, 'E_UNAUTHORIZED');
  t.equal((await use(second)).status, 200, 'the other credential is untouched');
  const keyOnly = (key: string) =>
    server.request('GET', '/hub/app-config', { headers: { [server.deps.config.names.appKeyHeader]: key } });
  t.equal((await keyOnly(first.key)).status, 401, 'a revoked key no longer opens /hub/app-config');
  t.equal((await keyOnly(second.key)).status, 200);
});

t.test("another application's credentials answer 403", async (t) => {
  const other = await server.deps.apps.create('other');
  const otherCredential = await server.deps.apps.createCredential(other.id);
  const crossed = await server.request('GET', probePath(server.app.id), { app: { id: other.id, ...otherCredential } });
  t.equal(crossed.status, 403);
  t.equal(crossed.body.code, 'E_FORBIDDEN');
  const own = await server.request('GET', probePath(other.id), { app: { id: other.id, ...otherCredential } });
  t.equal(own.status, 200);
  t.same(own.body, { app: other.id });
});

t.test('credentials are checked before the body is parsed: a caller without them learns nothing of its body', async (t) => {
  const path = `/applications/${server.app.id}/users/u1/data`;
  for (const [contentType, body] of [
    ['application/json', '{"data":'],
    ['text/plain', 'hello'],
  ]) {
    const res = await server.request('PUT', path, { headers: { 'content-type': contentType }, rawBody: body });
    t.equal(res.status, 401, contentType);
    t.equal(res.body.code, 'E_UNAUTHORIZED');
  }
  const credential = { id: server.app.id, ...(await server.deps.apps.createCredential(server.app.id)) };
  const malformed = await server.request('PUT', path, { app: credential, headers: { 'content-type': 'application/json' }, rawBody: '{"data":' });
  t.equal(malformed.status, 400, 'with them, the body is read');
});
