import t, { type Test } from 'tap';
import { startServer, type TestApp, type TestResponse, type TestServer } from '../helpers/server.js';
import { registerRedirects, signInByLink } from '../helpers/sign-in.js';
import { newId } from '../../src/lib/ids.js';

// API.md "CORS": the `allowed_origins` of any app's OIDC clients are answered as `SVC_CORS_ORIGINS` are, on the routes a browser client calls.
const SPA = 'https://spa.example';

const preflight = (server: TestServer, path: string, origin = SPA, method = 'GET') =>
  server.request('OPTIONS', path, { headers: { origin, 'access-control-request-method': method } });

function allows(t: Test, res: TestResponse, origin: string | null, what: string) {
  t.equal(res.headers.get('access-control-allow-origin'), origin, what);
  if (origin) t.equal(res.headers.get('vary'), 'origin', `${what}: varies by origin`);
}

const clientsPath = (app: TestApp) => `/applications/${app.id}/oidc-clients`;

t.test("a client's allowed_origins are answered on /me, /hub and their preflights, not on platform routes", async (t) => {
  const server = await startServer(t);
  const { app } = server;
  const user = await signInByLink(server, 'ada@example.com');
  const me = `/me/applications/${app.id}/data`;
  allows(t, await server.request('GET', me, { token: user.access_token, headers: { origin: SPA } }), null, 'no client registers it yet');

  await registerRedirects(server, { allowed_origins: [SPA] });
  const read = await server.request('GET', me, { token: user.access_token, headers: { origin: SPA } });
  t.equal(read.status, 200);
  allows(t, read, SPA, 'a /me read');
  const meFlight = await preflight(server, me, SPA, 'PUT');
  t.equal(meFlight.status, 204);
  allows(t, meFlight, SPA, 'its preflight');
  t.match(meFlight.headers.get('access-control-allow-methods'), /PUT/);
  t.match(meFlight.headers.get('access-control-allow-headers'), /authorization/);
  allows(t, await server.request('GET', me, { token: user.access_token, headers: { origin: 'https://other.example' } }), null, 'another origin');
  allows(t, await preflight(server, me, 'https://other.example'), null, "another origin's preflight");
  allows(t, await preflight(server, '/me/groups', SPA, 'POST'), SPA, 'any /me route');
  const refused = await server.request('DELETE', '/me/meta', { token: user.access_token, headers: { origin: SPA } });
  t.equal(refused.status, 405);
  allows(t, refused, SPA, "a method refused on a /me route's path");
  const unknown = await server.request('GET', '/me/nowhere', { token: user.access_token, headers: { origin: SPA } });
  t.equal(unknown.status, 404);
  allows(t, unknown, null, 'a path of no route');
  allows(t, await server.request('HEAD', me, { token: user.access_token, headers: { origin: SPA } }), SPA, 'a HEAD of a /me read');

  const refreshed = await server.request('POST', '/hub/auth/token', { headers: { origin: SPA }, body: { refresh_token: user.refresh_token } });
  t.equal(refreshed.status, 200);
  allows(t, refreshed, SPA, 'the token endpoint');
  allows(t, await preflight(server, '/hub/auth/token', SPA, 'POST'), SPA, "the token endpoint's preflight");
  allows(t, await server.request('GET', '/hub/auth/keys', { headers: { origin: SPA } }), SPA, 'the keys');
  allows(t, await server.request('GET', '/.well-known/oauth-authorization-server', { headers: { origin: SPA } }), SPA, 'the discovery document');

  const platform = `/applications/${app.id}/users/${user.app_user_id}/data`;
  const platformRead = await server.request('GET', platform, { app, headers: { origin: SPA } });
  t.equal(platformRead.status, 200);
  allows(t, platformRead, null, 'a platform route (app secret)');
  allows(t, await preflight(server, platform), null, "a platform route's preflight");
  allows(t, await preflight(server, '/hub/auth/magic', SPA, 'POST'), null, 'the platform magic link (app secret) under /hub');
  allows(t, await server.request('POST', '/hub/auth/magic', { app, headers: { origin: SPA }, body: {} }), null, 'its answer');
  allows(t, await preflight(server, '/admin/applications'), null, '/admin');
});

t.test('an origin stays allowed while any client registers it, and goes at once with the last', async (t) => {
  const server = await startServer(t);
  const { app } = server;
  const other = await server.deps.apps.create('other');
  const otherCredential = await server.deps.apps.createCredential(other.id);
  const otherApp: TestApp = { id: other.id, key: otherCredential.key, secret: otherCredential.secret };
  const path = '/me/groups';

  const first = await registerRedirects(server, { allowed_origins: [SPA, 'http://localhost:5173'] });
  const second = await registerRedirects(server, { allowed_origins: [SPA] }, otherApp);
  allows(t, await preflight(server, path), SPA, 'registered by two clients of two apps');

  t.equal((await server.request('DELETE', `${clientsPath(app)}/${first.id}`, { app })).status, 204);
  allows(t, await preflight(server, path), SPA, 'one client still registers it');
  allows(t, await preflight(server, path, 'http://localhost:5173'), null, 'the deleted client alone had this one');

  const put = await server.request('PUT', `${clientsPath(otherApp)}/${second.id}`, { app: otherApp, body: { config: { allowed_origins: ['https://next.example'] } } });
  t.equal(put.status, 200);
  allows(t, await preflight(server, path), null, 'dropped by a PUT of the last client listing it');
  allows(t, await preflight(server, path, 'https://next.example'), 'https://next.example', 'the origin the PUT gave');

  t.equal((await server.request('DELETE', `${clientsPath(otherApp)}/${second.id}`, { app: otherApp })).status, 204);
  allows(t, await preflight(server, path, 'https://next.example'), null, 'gone with the client');
});

t.test('a server started again on the same data dir answers the origins stored', async (t) => {
  const dataDir = t.testdir();
  const first = await startServer(t, { dataDir });
  await registerRedirects(first, { allowed_origins: [SPA] });
  const user = await signInByLink(first, 'ada@example.com');
  // A client stored before the origin rule, with entries no browser sends for a real page, or that any sandboxed page sends (`null`).
  const id = newId('oidc_client');
  const old = { id, app_id: first.app.id, name: 'Old', description: '', config: { allowed_origins: ['null', 'https://old.example/'] } };
  await first.deps.store.commit(() => first.deps.store.db('oidc_clients').put([first.app.id, id], old));
  await first.close();

  const again = await startServer(t, { dataDir });
  const read = await again.request('GET', `/me/applications/${first.app.id}/data`, { token: user.access_token, headers: { origin: SPA } });
  t.equal(read.status, 200);
  allows(t, read, SPA, 'a /me read after the restart');
  allows(t, await preflight(again, '/me/groups'), SPA, 'a preflight after the restart');
  allows(t, await preflight(again, '/me/groups', 'null'), null, 'a stored entry that is no origin is never answered');
});
