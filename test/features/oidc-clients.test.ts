import t, { type Test } from 'tap';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { alteredSecret, startServer, type TestApp, type TestServer } from '../helpers/server.js';
import { manualClock } from '../../src/lib/clock.js';

const START = Date.parse('2026-03-01T12:00:00.000Z');
const DAY = 24 * 3600 * 1000;

const clientsPath = (app: TestApp) => `/applications/${app.id}/oidc-clients`;

async function otherApp(server: TestServer, name = 'other'): Promise<TestApp> {
  const app = await server.deps.apps.create(name);
  const credential = await server.deps.apps.createCredential(app.id);
  return { id: app.id, key: credential.key, secret: credential.secret };
}

async function createClient(server: TestServer, body: unknown = { name: 'Web' }, app = server.app) {
  const res = await server.request('POST', clientsPath(app), { app, body });
  if (res.status !== 200) throw new Error(`create failed: ${res.status} ${res.text}`);
  return res.body;
}

const masked = (secret: string) => `${secret.slice(0, 6)}…${secret.slice(-4)}`;

function expectError(t: Test, res: { status: number; body: any }, status: number, code: string) {
  t.equal(res.status, status, `status ${status}`);
  t.equal(res.body?.code, code, `code ${code}`);
  t.equal(res.body?.statusCode, status);
  t.ok(Array.isArray(res.body?.messages) && res.body.messages.length >= 1, 'messages');
}

function filesBelow(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesBelow(path) : [path];
  });
}

t.test('create answers the client with one credential whose secret is shown this once', async (t) => {
  const clock = manualClock(START);
  const server = await startServer(t, { clock });
  const config = {
    allowed_origins: ['https://app.example.com', 'http://localhost:8080'],
    redirect_uris: ['https://app.example.com/callback?x=1', 'HTTP://LOCALHOST:8080/cb'],
    post_logout_uris: ['https://app.example.com/bye'],
    logo_uri: 'https://cdn.example.com/logo.png',
    logo_dark_mode_uri: 'https://cdn.example.com/logo-dark.png',
    hub_title: 'Example',
    hub_dark_mode: 'auto',
    hub_show_logos: true,
    is_pkce_supported: false,
    custom_flag: true,
    nested: { kept: ['as', 'given', 1] },
  };
  const res = await server.request('POST', clientsPath(server.app), {
    app: server.app,
    body: { name: '  Web app  ', description: 'The web front end', config },
  });
  t.equal(res.status, 200);
  const client = res.body;
  t.strictSame(Object.keys(client).sort(), ['app_id', 'config', 'created_at', 'credentials', 'description', 'id', 'name', 'updated_at'], "SPEC's OIDC client fields");
  t.match(client.id, /^oidc_client_[0-9A-HJKMNP-TV-Z]{26}$/);
  t.equal(client.app_id, server.app.id);
  t.equal(client.name, 'Web app', 'name is trimmed');
  t.equal(client.description, 'The web front end');
  t.same(client.config, { ...config, allowed_scopes: ['openid', 'profile', 'email'] }, 'config kept, scopes defaulted');
  t.equal(client.created_at, '2026-03-01T12:00:00.000Z');
  t.equal(client.updated_at, client.created_at);
  t.equal(client.credentials.length, 1);
  const [credential] = client.credentials;
  t.strictSame(Object.keys(credential).sort(), [
    'app_variant_id',
    'application',
    'client_id',
    'created_at',
    'expired',
    'expires',
    'name',
    'oidc_client_configuration_id',
    'secret',
    'updated_at',
  ]);
  t.match(credential.client_id, /^oc_[a-z2-7]{24}$/);
  t.match(credential.secret, /^sec_[A-Za-z0-9_-]{43}$/);
  t.match(credential.oidc_client_configuration_id, /^oidcc_[0-9A-HJKMNP-TV-Z]{26}$/);
  t.equal(credential.expires, '2027-03-01T12:00:00.000Z', 'expires one year later');
  t.equal(credential.expired, false);
  t.equal(credential.application, server.app.id);
  t.equal(credential.app_variant_id, 'default');
  t.equal(credential.name, 'default');
  t.equal(credential.created_at, client.created_at);

  const read = await server.request('GET', `${clientsPath(server.app)}/${client.id}`, { app: server.app });
  t.equal(read.status, 200);
  t.equal(read.body.credentials[0].secret, masked(credential.secret), 'later reads show the secret masked');
  t.strictSame(read.body, { ...client, credentials: [{ ...credential, secret: masked(credential.secret) }] });

  const list = await server.request('GET', clientsPath(server.app), { app: server.app });
  t.equal(list.body.results[0].credentials[0].secret, masked(credential.secret), 'the list masks it too');
});

const DEFAULT_CONFIG = {
  allowed_origins: [],
  redirect_uris: [],
  post_logout_uris: [],
  logo_uri: null,
  logo_dark_mode_uri: null,
  allowed_scopes: ['openid', 'profile', 'email'],
  hub_title: null,
  hub_dark_mode: 'auto',
  hub_show_logos: true,
  is_pkce_supported: true,
};

t.test('a body without config shows every config field SPEC names, at its default; description defaults to empty', async (t) => {
  const server = await startServer(t);
  const client = await createClient(server, { name: 'Bare' });
  t.same(client.config, DEFAULT_CONFIG);
  const echoed = await server.request('PUT', `${clientsPath(server.app)}/${client.id}`, { app: server.app, body: client });
  t.equal(echoed.status, 200, 'a client read and sent back passes, its nulls included');
  t.same(echoed.body.config, DEFAULT_CONFIG);
  t.equal(client.description, '');
  const empty = await createClient(server, { name: 'No scopes', config: { allowed_scopes: [] } });
  t.same(empty.config.allowed_scopes, [], 'an explicit empty list is kept');
});

t.test('hub_dark_mode takes each of enabled, disabled and auto (ADDENDUM §6), as given', async (t) => {
  const server = await startServer(t);
  for (const mode of ['enabled', 'disabled', 'auto']) {
    const client = await createClient(server, { name: mode, config: { hub_dark_mode: mode } });
    t.equal(client.config.hub_dark_mode, mode, mode);
    const read = await server.request('GET', `${clientsPath(server.app)}/${client.id}`, { app: server.app });
    t.equal(read.body.config.hub_dark_mode, mode, `${mode}, read back`);
  }
});

t.test('every route needs the app credentials of the path app', async (t) => {
  const server = await startServer(t);
  const other = await otherApp(server);
  const client = await createClient(server);
  const credentialId = client.credentials[0].client_id;
  const base = clientsPath(server.app);
  const routes: Array<[string, string, unknown]> = [
    ['POST', base, { name: 'x' }],
    ['GET', base, undefined],
    ['GET', `${base}/${client.id}`, undefined],
    ['PUT', `${base}/${client.id}`, { name: 'x' }],
    ['DELETE', `${base}/${client.id}`, undefined],
    ['POST', `${base}/${client.id}/credentials`, {}],
    ['DELETE', `${base}/${client.id}/credentials/${credentialId}`, undefined],
  ];
  for (const [method, path, body] of routes) {
    expectError(t, await server.request(method, path, { body }), 401, 'E_UNAUTHORIZED');
    const wrongSecret = { ...server.app, secret: alteredSecret(server.app.secret) };
    expectError(t, await server.request(method, path, { body, app: wrongSecret }), 401, 'E_UNAUTHORIZED');
    expectError(t, await server.request(method, path, { body, app: other }), 403, 'E_FORBIDDEN');
  }
  const after = await server.request('GET', `${base}/${client.id}`, { app: server.app });
  t.equal(after.body.name, 'Web', 'the refused calls changed nothing');
  t.equal(after.body.credentials.length, 1);
  const list = await server.request('GET', base, { app: server.app });
  t.equal(list.body.total_results, 1);
});

t.test('invalid bodies answer 400 E_VALIDATION naming each bad field and change nothing', async (t) => {
  const server = await startServer(t);
  const path = clientsPath(server.app);
  const longList = Array.from({ length: 101 }, (_, i) => `https://e.example/${i}`);
  const cases: Array<[string, unknown, string[]]> = [
    ['no name', {}, ['name']],
    ['empty name', { name: '' }, ['name']],
    ['blank name', { name: '   ' }, ['name']],
    ['name not a string', { name: 5 }, ['name']],
    ['name too long', { name: 'n'.repeat(201) }, ['name']],
    ['name with a C1 control character (NEL)', { name: 'Web\u0085app' }, ['name']],
    ['description not a string', { name: 'a', description: 5 }, ['description']],
    ['description too long', { name: 'a', description: 'd'.repeat(1001) }, ['description']],
    ['unknown top-level field', { name: 'a', colour: 'red' }, ['colour']],
    ['body an array', [{ name: 'a' }], ['body']],
    ['body a string', 'name', ['body']],
    ['config an array', { name: 'a', config: [] }, ['config']],
    ['config a string', { name: 'a', config: 'x' }, ['config']],
    ['config null', { name: 'a', config: null }, ['config']],
    ['redirect uri with a fragment', { name: 'a', config: { redirect_uris: ['https://ok.example/cb', 'https://a.example/cb#x'] } }, ['config.redirect_uris[1]']],
    ['relative redirect uri', { name: 'a', config: { redirect_uris: ['/callback'] } }, ['config.redirect_uris[0]']],
    ['redirect uris not an array', { name: 'a', config: { redirect_uris: 'https://a.example/cb' } }, ['config.redirect_uris']],
    ['too many redirect uris', { name: 'a', config: { redirect_uris: longList } }, ['config.redirect_uris']],
    ['origin not http(s)', { name: 'a', config: { allowed_origins: ['ftp://files.example'] } }, ['config.allowed_origins[0]']],
    ['origin with whitespace', { name: 'a', config: { allowed_origins: [' https://a.example'] } }, ['config.allowed_origins[0]']],
    ['logout uri with a script scheme', { name: 'a', config: { post_logout_uris: ['javascript:alert(1)'] } }, ['config.post_logout_uris[0]']],
    ['logo without slashes', { name: 'a', config: { logo_uri: 'http:logo.example' } }, ['config.logo_uri']],
    ['dark logo not a string', { name: 'a', config: { logo_dark_mode_uri: 5 } }, ['config.logo_dark_mode_uri']],
    ['url too long', { name: 'a', config: { logo_uri: `https://a.example/${'p'.repeat(2048)}` } }, ['config.logo_uri']],
    ['scope with a space', { name: 'a', config: { allowed_scopes: ['openid', 'bad scope'] } }, ['config.allowed_scopes[1]']],
    ['scopes not an array', { name: 'a', config: { allowed_scopes: 'openid' } }, ['config.allowed_scopes']],
    ['scope not a string', { name: 'a', config: { allowed_scopes: [7] } }, ['config.allowed_scopes[0]']],
    ['dark mode not in the set', { name: 'a', config: { hub_dark_mode: 'dark' } }, ['config.hub_dark_mode']],
    ['hub title not a string', { name: 'a', config: { hub_title: 5 } }, ['config.hub_title']],
    ['hub title with a line break', { name: 'a', config: { hub_title: 'Sign in\nto Evil' } }, ['config.hub_title']],
    ['hub title with a C1 control character (CSI)', { name: 'a', config: { hub_title: 'Hub\u009b2J' } }, ['config.hub_title']],
    ['redirect uri with a user name', { name: 'a', config: { redirect_uris: ['https://app.example@evil.example/cb'] } }, ['config.redirect_uris[0]']],
    ['logout uri with a password', { name: 'a', config: { post_logout_uris: ['https://u:secret@app.example/bye'] } }, ['config.post_logout_uris[0]']],
    ['logo with an empty user name', { name: 'a', config: { logo_uri: 'https://:pw@cdn.example/l.png' } }, ['config.logo_uri']],
    ['show logos not a boolean', { name: 'a', config: { hub_show_logos: 'true' } }, ['config.hub_show_logos']],
    ['pkce not a boolean', { name: 'a', config: { is_pkce_supported: 1 } }, ['config.is_pkce_supported']],
    ['known key null where no value is no default', { name: 'a', config: { hub_show_logos: null } }, ['config.hub_show_logos']],
    ['other keys past 16 KiB as JSON', { name: 'a', config: { notes: 'n'.repeat(16 * 1024) } }, ['config']],
    ['other keys past 16 KiB as many small keys', { name: 'a', config: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, i])) }, ['config']],
    [
      'several at once',
      { description: 1, config: { redirect_uris: ['x'], hub_dark_mode: 'x', is_pkce_supported: 'yes' } },
      ['name', 'description', 'config.redirect_uris[0]', 'config.hub_dark_mode', 'config.is_pkce_supported'],
    ],
  ];
  for (const [label, body, fields] of cases) {
    const res = await server.request('POST', path, { app: server.app, body });
    expectError(t, res, 400, 'E_VALIDATION');
    t.strictSame(Object.keys(res.body.field_errors ?? {}).sort(), [...fields].sort(), label);
    for (const field of fields) t.ok(res.body.field_errors[field]?.every((m: unknown) => typeof m === 'string' && m), `${label}: ${field} has a message`);
  }
  const noBody = await server.request('POST', path, { app: server.app });
  expectError(t, noBody, 400, 'E_VALIDATION');
  t.strictSame(Object.keys(noBody.body.field_errors), ['name'], 'no body at all counts as {}: the name is missing');
  const badJson = await server.request('POST', path, {
    app: server.app,
    rawBody: '{"name": ',
    headers: { 'content-type': 'application/json' },
  });
  expectError(t, badJson, 400, 'E_BAD_JSON');
  const list = await server.request('GET', path, { app: server.app });
  t.equal(list.body.total_results, 0, 'no refused create left anything behind');
  t.same(list.body.results, []);
});

t.test('config keys SPEC does not name hold at most 16 KiB of JSON; the fields it names do not count', async (t) => {
  const server = await startServer(t);
  const notes = (bytes: number) => 'n'.repeat(bytes - JSON.stringify({ notes: '' }).length);
  const urls = Array.from({ length: 100 }, (_, i) => `https://app.example/${i}${'u'.repeat(2000)}`);
  const client = await createClient(server, { name: 'Web', config: { notes: notes(16 * 1024), redirect_uris: urls, hub_title: 'Hub' } });
  t.equal(client.config.notes.length, 16 * 1024 - 12, 'exactly 16 KiB is kept, beside 200 KB of redirect URIs');

  const path = `${clientsPath(server.app)}/${client.id}`;
  const before = await server.request('GET', path, { app: server.app });
  const over = await server.request('PUT', path, { app: server.app, body: { config: { notes: notes(16 * 1024 + 1) } } });
  expectError(t, over, 400, 'E_VALIDATION');
  t.same(over.body.field_errors, { config: ['keys SPEC does not name may hold at most 16384 bytes as JSON'] });
  t.strictSame((await server.request('GET', path, { app: server.app })).body, before.body, 'the refused PUT changed nothing');
});

t.test('allowed_origins takes only origins as browsers send them: any other URL is 400 on its item and stores nothing', async (t) => {
  const server = await startServer(t);
  const client = await createClient(server, { name: 'Web', config: { allowed_origins: ['https://old.example'] } });
  const path = `${clientsPath(server.app)}/${client.id}`;
  const before = await server.request('GET', path, { app: server.app });
  const refused: Array<[string, string]> = [
    ['a path', 'https://a.example/app'],
    ['a trailing slash', 'https://a.example/'],
    ['a query', 'https://a.example?x=1'],
    ['a fragment', 'https://a.example#top'],
    ['userinfo', 'https://user@a.example'],
    ['an upper-case host', 'https://A.example'],
    ['an upper-case scheme', 'HTTPS://a.example'],
    ['the default https port', 'https://a.example:443'],
    ['the default http port', 'http://a.example:80'],
    ['a non-http scheme', 'ftp://a.example'],
    ['a host not in ASCII', 'https://bücher.example'],
  ];
  for (const [label, origin] of refused) {
    const config = { allowed_origins: ['https://ok.example', origin] };
    const put = await server.request('PUT', path, { app: server.app, body: { name: 'Web', config } });
    expectError(t, put, 400, 'E_VALIDATION');
    t.strictSame(Object.keys(put.body.field_errors ?? {}), ['config.allowed_origins[1]'], `PUT with ${label}: the item is named`);
    t.ok(put.body.field_errors?.['config.allowed_origins[1]']?.some((m: string) => m.startsWith('must be an origin')), `${label}: the message says why`);
    const created = await server.request('POST', clientsPath(server.app), { app: server.app, body: { name: 'New', config } });
    expectError(t, created, 400, 'E_VALIDATION');
    t.strictSame(Object.keys(created.body.field_errors ?? {}), ['config.allowed_origins[1]'], `POST with ${label}: the item is named`);
  }
  const unchanged = await server.request('GET', path, { app: server.app });
  t.strictSame(unchanged.body, before.body, 'no refused PUT changed the client');
  t.strictSame(unchanged.body.config.allowed_origins, ['https://old.example']);
  const list = await server.request('GET', clientsPath(server.app), { app: server.app });
  t.equal(list.body.total_results, 1, 'no refused POST created one');

  const accepted = ['https://a.example', 'http://localhost:3000', 'https://a.example:8443', 'http://[::1]:8080'];
  const put = await server.request('PUT', path, { app: server.app, body: { name: 'Web', config: { allowed_origins: accepted } } });
  t.equal(put.status, 200);
  t.strictSame(put.body.config.allowed_origins, accepted, 'origins are answered as given');
  const read = await server.request('GET', path, { app: server.app });
  t.strictSame(read.body.config.allowed_origins, accepted, 'and stored as given');
  const created = await createClient(server, { name: 'Other', config: { allowed_origins: accepted } });
  t.strictSame(created.config.allowed_origins, accepted, 'a create takes them too');
});

t.test('allowed_origins stored before origins were required still read as stored', async (t) => {
  const server = await startServer(t);
  const client = await createClient(server, { name: 'Old' });
  const clients = server.deps.store.db<any>('oidc_clients');
  const key = [server.app.id, client.id];
  const legacy = ['https://app.example.com/path?x=1', 'https://a.example/'];
  await server.deps.store.commit(() => clients.put(key, { ...clients.get(key), config: { allowed_origins: legacy } }));
  const read = await server.request('GET', `${clientsPath(server.app)}/${client.id}`, { app: server.app });
  t.equal(read.status, 200);
  t.strictSame(read.body.config.allowed_origins, legacy, 'no stored value is rewritten or dropped');
  const list = await server.request('GET', clientsPath(server.app), { app: server.app });
  t.strictSame(list.body.results[0].config.allowed_origins, legacy);
});

t.test('PUT replaces name, description and config as a whole', async (t) => {
  const clock = manualClock(START);
  const server = await startServer(t, { clock });
  const client = await createClient(server, {
    name: 'Web',
    description: 'old',
    config: { redirect_uris: ['https://a.example/cb'], hub_title: 'Old', custom: 1 },
  });
  const path = `${clientsPath(server.app)}/${client.id}`;
  clock.advance(60_000);
  const res = await server.request('PUT', path, { app: server.app, body: { name: 'Renamed', config: { hub_dark_mode: 'enabled' } } });
  t.equal(res.status, 200);
  t.equal(res.body.id, client.id);
  t.equal(res.body.name, 'Renamed');
  t.equal(res.body.description, '', 'an absent description is cleared');
  t.same(res.body.config, { ...DEFAULT_CONFIG, hub_dark_mode: 'enabled' }, 'config replaced whole');
  t.equal(res.body.created_at, client.created_at, 'created_at stays');
  t.equal(res.body.updated_at, '2026-03-01T12:01:00.000Z', 'updated_at moves');
  t.equal(res.body.credentials[0].client_id, client.credentials[0].client_id, 'credentials stay');
  t.equal(res.body.credentials[0].secret, masked(client.credentials[0].secret), 'and stay masked');

  const read = await server.request('GET', path, { app: server.app });
  t.strictSame(read.body, res.body, 'the replacement is what is stored');

  clock.advance(60_000);
  const echoed = await server.request('PUT', path, {
    app: server.app,
    body: { ...read.body, id: 'oidc_client_forged', app_id: 'app_forged', created_at: '2000-01-01T00:00:00.000Z', description: 'echoed back' },
  });
  t.equal(echoed.status, 200, 'read-only fields echoed from a GET are accepted');
  t.equal(echoed.body.id, client.id, 'and ignored');
  t.equal(echoed.body.app_id, server.app.id);
  t.equal(echoed.body.created_at, client.created_at);
  t.equal(echoed.body.description, 'echoed back');
  t.equal(echoed.body.credentials.length, 1);

  const bad = await server.request('PUT', path, { app: server.app, body: { name: '', config: { redirect_uris: ['https://a.example/#f'] } } });
  expectError(t, bad, 400, 'E_VALIDATION');
  t.strictSame(Object.keys(bad.body.field_errors).sort(), ['config.redirect_uris[0]', 'name']);
  const unchanged = await server.request('GET', path, { app: server.app });
  t.strictSame(unchanged.body, echoed.body, 'a refused PUT changes nothing');

  const unknown = await server.request('PUT', `${clientsPath(server.app)}/oidc_client_01JB0000000000000000000000`, {
    app: server.app,
    body: { name: 'x' },
  });
  expectError(t, unknown, 404, 'E_OIDC_CLIENT_NOT_FOUND');
});

t.test('PUT without a name keeps the client\'s name (SPEC requires it on creation only); POST still needs one', async (t) => {
  const server = await startServer(t);
  const client = await createClient(server, { name: 'Web', description: 'old', config: { hub_title: 'Old' } });
  const path = `${clientsPath(server.app)}/${client.id}`;
  const res = await server.request('PUT', path, { app: server.app, body: { config: { hub_dark_mode: 'enabled' } } });
  t.equal(res.status, 200);
  t.equal(res.body.name, 'Web', 'the name stays');
  t.equal(res.body.description, '', 'an absent description is still cleared');
  t.same(res.body.config, { ...DEFAULT_CONFIG, hub_dark_mode: 'enabled' }, 'config is still replaced whole');
  t.strictSame((await server.request('GET', path, { app: server.app })).body, res.body, 'as stored');
  const noBody = await server.request('PUT', path, { app: server.app });
  t.equal(noBody.status, 200, 'a missing body counts as {}');
  t.equal(noBody.body.name, 'Web');

  const unnamed = await server.request('POST', clientsPath(server.app), { app: server.app, body: { description: 'x' } });
  expectError(t, unnamed, 400, 'E_VALIDATION');
  t.same(unnamed.body.field_errors, { name: ['is required'] });
});

t.test('DELETE removes the client and its credentials', async (t) => {
  const server = await startServer(t);
  const kept = await createClient(server, { name: 'Kept' });
  const gone = await createClient(server, { name: 'Gone' });
  const path = `${clientsPath(server.app)}/${gone.id}`;
  const res = await server.request('DELETE', path, { app: server.app });
  t.equal(res.status, 204);
  t.equal(res.text, '');
  expectError(t, await server.request('GET', path, { app: server.app }), 404, 'E_OIDC_CLIENT_NOT_FOUND');
  expectError(t, await server.request('DELETE', path, { app: server.app }), 404, 'E_OIDC_CLIENT_NOT_FOUND');
  expectError(
    t,
    await server.request('POST', `${path}/credentials`, { app: server.app, body: {} }),
    404,
    'E_OIDC_CLIENT_NOT_FOUND',
  );
  const list = await server.request('GET', clientsPath(server.app), { app: server.app });
  t.equal(list.body.total_results, 1);
  t.same(list.body.results.map((c: any) => c.id), [kept.id]);
  const stored = server.deps.store.db('oidc_credentials');
  const left = [...stored.getKeys({})].map((key) => (key as string[])[1]);
  t.same(left, [kept.id], 'no credential of the deleted client is left in storage');
});

t.test('credentials rotate: add a new one, delete the old one', async (t) => {
  const clock = manualClock(START);
  const server = await startServer(t, { clock });
  const client = await createClient(server);
  const path = `${clientsPath(server.app)}/${client.id}`;
  const old = client.credentials[0];

  clock.advance(DAY);
  const added = await server.request('POST', `${path}/credentials`, { app: server.app });
  t.equal(added.status, 200, 'a credential needs no body');
  const fresh = added.body;
  t.match(fresh.secret, /^sec_[A-Za-z0-9_-]{43}$/, 'the new secret is shown this once');
  t.not(fresh.client_id, old.client_id);
  t.not(fresh.secret, old.secret);
  t.not(fresh.oidc_client_configuration_id, old.oidc_client_configuration_id);
  t.equal(fresh.expires, '2027-03-02T12:00:00.000Z');
  t.equal(fresh.created_at, '2026-03-02T12:00:00.000Z');

  const both = await server.request('GET', path, { app: server.app });
  t.same(
    both.body.credentials.map((c: any) => [c.client_id, c.secret]),
    [
      [old.client_id, masked(old.secret)],
      [fresh.client_id, masked(fresh.secret)],
    ],
    'both listed, oldest first, both masked',
  );
  t.equal(both.body.updated_at, '2026-03-02T12:00:00.000Z', 'a credential change is a change to the client');

  const removed = await server.request('DELETE', `${path}/credentials/${old.client_id}`, { app: server.app });
  t.equal(removed.status, 204);
  const after = await server.request('GET', path, { app: server.app });
  t.same(after.body.credentials.map((c: any) => c.client_id), [fresh.client_id], 'only the new one is left');
  expectError(
    t,
    await server.request('DELETE', `${path}/credentials/${old.client_id}`, { app: server.app }),
    404,
    'E_CREDENTIAL_NOT_FOUND',
  );

  const sibling = await createClient(server, { name: 'Sibling' });
  expectError(
    t,
    await server.request('DELETE', `${clientsPath(server.app)}/${sibling.id}/credentials/${fresh.client_id}`, { app: server.app }),
    404,
    'E_CREDENTIAL_NOT_FOUND',
  );
  const stillThere = await server.request('GET', path, { app: server.app });
  t.equal(stillThere.body.credentials.length, 1, "another client's path cannot delete it");

  const last = await server.request('DELETE', `${path}/credentials/${fresh.client_id}`, { app: server.app });
  t.equal(last.status, 204);
  const none = await server.request('GET', path, { app: server.app });
  t.same(none.body.credentials, [], 'a client may be left without credentials');
});

t.test('a credential takes a name, an app variant and an expiry', async (t) => {
  const clock = manualClock(START);
  const server = await startServer(t, { clock });
  const client = await createClient(server);
  const path = `${clientsPath(server.app)}/${client.id}/credentials`;
  const res = await server.request('POST', path, {
    app: server.app,
    body: { name: ' Mobile ', app_variant_id: 'ios', expires: '2026-03-01T14:00:00+01:00' },
  });
  t.equal(res.status, 200);
  t.equal(res.body.name, 'Mobile');
  t.equal(res.body.app_variant_id, 'ios');
  t.equal(res.body.expires, '2026-03-01T13:00:00.000Z', 'expires normalised to UTC');
  t.equal(res.body.expired, false);
  const furthest = await server.request('POST', path, { app: server.app, body: { expires: '2031-03-01T12:00:00Z' } });
  t.equal(furthest.status, 200, 'expires may lie up to 5 years ahead');
  for (const expires of ['2031-03-01T12:00:00.001Z', '9999-12-31T23:59:59Z']) {
    const tooFar = await server.request('POST', path, { app: server.app, body: { expires } });
    expectError(t, tooFar, 400, 'E_VALIDATION');
    t.same(tooFar.body.field_errors, { expires: ['must be at most 5 years ahead'] }, `${expires}: past 5 years ahead is refused`);
  }

  const cases: Array<[string, unknown, string[]]> = [
    ['expires in the past', { expires: '2026-03-01T11:59:59Z' }, ['expires']],
    ['expires now', { expires: '2026-03-01T12:00:00Z' }, ['expires']],
    ['expires not a date', { expires: 'next week' }, ['expires']],
    ['expires an impossible date', { expires: '2026-02-30T00:00:00Z' }, ['expires']],
    ['expires at hour 24', { expires: '2030-01-01T24:00:00Z' }, ['expires']],
    ['expires in year 10000 once in UTC', { expires: '9999-12-31T23:59:59-12:00' }, ['expires']],
    ['expires at minute 60', { expires: '2030-01-01T10:60:00Z' }, ['expires']],
    ['expires a number', { expires: 1767225600000 }, ['expires']],
    ['empty name', { name: '' }, ['name']],
    ['name with a C1 control character (CSI)', { name: 'Mobile\u009b2J' }, ['name']],
    ['bad app variant', { app_variant_id: 'has space' }, ['app_variant_id']],
    ['unknown field', { secret: 'sec_mine' }, ['secret']],
    ['body an array', [], ['body']],
  ];
  for (const [label, body, fields] of cases) {
    const bad = await server.request('POST', path, { app: server.app, body });
    expectError(t, bad, 400, 'E_VALIDATION');
    t.strictSame(Object.keys(bad.body.field_errors ?? {}).sort(), fields, label);
  }
  const read = await server.request('GET', `${clientsPath(server.app)}/${client.id}`, { app: server.app });
  t.equal(read.body.credentials.length, 3, 'refused credentials were not added');
});

t.test('a client holds at most 10 credentials, expired ones included: the 11th is 400 and changes nothing', async (t) => {
  const clock = manualClock(START);
  const server = await startServer(t, { clock });
  const client = await createClient(server);
  const path = `${clientsPath(server.app)}/${client.id}`;
  const add = (body?: unknown) => server.request('POST', `${path}/credentials`, { app: server.app, body });
  t.equal((await add({ expires: '2026-03-01T13:00:00Z' })).status, 200, 'one that will expire');
  for (let i = 0; i < 8; i++) t.equal((await add()).status, 200);
  clock.set(Date.parse('2026-03-02T12:00:00Z'));
  const before = await server.request('GET', path, { app: server.app });
  t.equal(before.body.credentials.length, 10);
  t.equal(before.body.credentials.filter((c: any) => c.expired).length, 1);

  const refused = await add({ name: 'eleventh' });
  expectError(t, refused, 400, 'E_VALIDATION');
  t.same(refused.body.field_errors, {
    credentials: ['a client holds at most 10 credentials, expired ones included: delete one before adding another'],
  });
  t.strictSame((await server.request('GET', path, { app: server.app })).body, before.body, 'nothing changed, not even updated_at');

  const expired = before.body.credentials.find((c: any) => c.expired);
  t.equal((await server.request('DELETE', `${path}/credentials/${expired.client_id}`, { app: server.app })).status, 204);
  t.equal((await add({ name: 'eleventh' })).status, 200, 'deleting one makes room');
  const sibling = await createClient(server, { name: 'Sibling' });
  t.equal(sibling.credentials.length, 1, 'the cap is per client');
  t.equal((await server.request('POST', `${clientsPath(server.app)}/${sibling.id}/credentials`, { app: server.app })).status, 200);
});

t.test('an application holds at most 100 clients: creates past it are 400 and change nothing, concurrent ones included', async (t) => {
  const server = await startServer(t);
  const base = clientsPath(server.app);
  const ids: string[] = [];
  for (let i = 0; i < 97; i++) ids.push((await createClient(server, { name: `c${i}` })).id);
  const racing = await Promise.all(Array.from({ length: 6 }, (_, i) => server.request('POST', base, { app: server.app, body: { name: `r${i}` } })));
  t.same(racing.map((r) => r.status).sort(), [200, 200, 200, 400, 400, 400], 'three of six concurrent creates take the last places');
  const refused = racing.find((r) => r.status === 400)!;
  expectError(t, refused, 400, 'E_VALIDATION');
  t.equal(refused.body.message, 'An application holds at most 100 OIDC clients: delete one before adding another');
  const full = await server.request('GET', `${base}?page_size=1000`, { app: server.app });
  t.equal(full.body.total_results, 100);
  t.equal(full.body.results.length, 100, 'no refused create left a client behind');
  t.equal((await server.request('GET', base, { app: server.app })).body.results.length, 100, 'a default page holds 100 (API.md: OIDC clients, List)');
  expectError(t, await server.request('POST', base, { app: server.app, body: { name: 'one more' } }), 400, 'E_VALIDATION');

  const other = await otherApp(server);
  t.ok(await createClient(server, { name: 'theirs' }, other), 'the cap is per application');
  t.equal((await server.request('DELETE', `${base}/${ids[0]}`, { app: server.app })).status, 204);
  t.equal((await server.request('POST', base, { app: server.app, body: { name: 'one more' } })).status, 200, 'deleting one makes room');
});

t.test('an expired credential is reported as expired', async (t) => {
  const clock = manualClock(START);
  const server = await startServer(t, { clock });
  const client = await createClient(server);
  const path = `${clientsPath(server.app)}/${client.id}`;
  const short = await server.request('POST', `${path}/credentials`, {
    app: server.app,
    body: { expires: '2026-03-01T13:00:00Z' },
  });
  const expiredFlags = async () => {
    const res = await server.request('GET', path, { app: server.app });
    return res.body.credentials.map((c: any) => c.expired);
  };
  t.same(await expiredFlags(), [false, false]);
  clock.set(Date.parse('2026-03-01T12:59:59.999Z'));
  t.same(await expiredFlags(), [false, false], 'not before its time');
  clock.set(Date.parse(short.body.expires));
  t.same(await expiredFlags(), [false, true], 'expired at its expiry instant');
  clock.set(Date.parse(client.credentials[0].expires));
  t.same(await expiredFlags(), [true, true], 'the default one expires after a year');
  const list = await server.request('GET', clientsPath(server.app), { app: server.app });
  t.same(list.body.results[0].credentials.map((c: any) => c.expired), [true, true], 'the list reports it too');
});

t.test('paging walks every client once in both orders with an exact total', async (t) => {
  const server = await startServer(t);
  const created: string[] = [];
  for (let i = 0; i < 23; i++) created.push((await createClient(server, { name: `client ${i}` })).id);
  await Promise.all(Array.from({ length: 6 }, (_, i) => createClient(server, { name: `parallel ${i}` })).map(async (p) => created.push((await p).id)));
  const ascending = [...created].sort();
  const base = clientsPath(server.app);

  async function walk(sort: string | undefined, pageSize: number): Promise<string[]> {
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const query = new URLSearchParams({ page_size: String(pageSize) });
      if (sort) query.set('sort', sort);
      if (after) query.set('after', after);
      const res = await server.request('GET', `${base}?${query}`, { app: server.app });
      t.equal(res.status, 200);
      t.equal(res.body.total_results, 29, 'total_results counts every client, not the page');
      t.ok(res.body.results.length <= pageSize);
      if (res.body.results.length === 0) return seen;
      seen.push(...res.body.results.map((c: any) => c.id));
      after = seen[seen.length - 1];
    }
  }
  t.same(await walk(undefined, 7), ascending, 'ascending by default, no gaps or duplicates');
  t.same(await walk('asc', 29), ascending);
  t.same(await walk('desc', 4), [...ascending].reverse(), 'descending');
  t.same(await walk('desc', 1000), [...ascending].reverse());

  const all = await server.request('GET', base, { app: server.app });
  t.equal(all.body.results.length, 29, 'the default page holds them all');

  await server.request('DELETE', `${base}/${ascending[3]}`, { app: server.app });
  const afterDelete = await server.request('GET', `${base}?page_size=3&after=${ascending[2]}`, { app: server.app });
  t.same(afterDelete.body.results.map((c: any) => c.id), ascending.slice(4, 7), 'a deleted cursor neighbour leaves no gap');
  t.equal(afterDelete.body.total_results, 28);
  const fromDeleted = await server.request('GET', `${base}?page_size=2&after=${ascending[3]}`, { app: server.app });
  t.same(fromDeleted.body.results.map((c: any) => c.id), ascending.slice(4, 6), 'a deleted client still works as a cursor');

  const other = await otherApp(server);
  const foreign = await server.request('GET', clientsPath(other), { app: other });
  t.same(foreign.body, { total_results: 0, results: [] }, "another app's list holds none of them");
});

t.test('a page past 32 MiB of clients answers 400 on page_size, never a page built whole in memory', async (t) => {
  const server = await startServer(t);
  const base = clientsPath(server.app);
  // 80 clients near the largest config: two lists of 100 URLs of 2048 characters and 16 KiB of other keys, 34 MB, past LIST_BYTES_LIMIT.
  const urls = Array.from({ length: 100 }, (_, i) => `https://app.example/${String(i).padStart(3, '0')}${'u'.repeat(2025)}`);
  const config = { redirect_uris: urls, post_logout_uris: urls, notes: 'n'.repeat(16_000) };
  for (let i = 0; i < 80; i++) await createClient(server, { name: `big ${i}`, config });
  for (const query of ['', '?page_size=80', '?page_size=1000&sort=desc']) {
    const res = await server.request('GET', `${base}${query}`, { app: server.app });
    expectError(t, res, 400, 'E_VALIDATION');
    t.strictSame(Object.keys(res.body.field_errors), ['page_size'], `${query}: ask for fewer`);
  }
  const fewer = await server.request('GET', `${base}?page_size=16`, { app: server.app });
  t.equal(fewer.status, 200);
  t.equal(fewer.body.total_results, 80);
  t.equal(fewer.body.results.length, 16);
  t.same(fewer.body.results[0].config.redirect_uris, urls);
});

t.test('malformed or out-of-range paging parameters answer 400, never a clamped page', async (t) => {
  const server = await startServer(t);
  await createClient(server);
  const base = clientsPath(server.app);
  const cases: Array<[string, string]> = [
    ['page_size=0', 'page_size'],
    ['page_size=1001', 'page_size'],
    ['page_size=-1', 'page_size'],
    ['page_size=abc', 'page_size'],
    ['page_size=1.5', 'page_size'],
    ['page_size=', 'page_size'],
    ['page_size=99999999999', 'page_size'],
    ['page_size=5&page_size=6', 'page_size'],
    ['after=user_01JB0000000000000000000000', 'after'],
    ['after=', 'after'],
    ['sort=up', 'sort'],
    ['sort=ASC', 'sort'],
    ['foo=1', 'foo'],
  ];
  for (const [query, field] of cases) {
    const res = await server.request('GET', `${base}?${query}`, { app: server.app });
    expectError(t, res, 400, 'E_VALIDATION');
    t.strictSame(Object.keys(res.body.field_errors), [field], query);
  }
  const both = await server.request('GET', `${base}?page_size=0&sort=sideways`, { app: server.app });
  t.strictSame(Object.keys(both.body.field_errors).sort(), ['page_size', 'sort'], 'each bad parameter is named');
  const edge = await server.request('GET', `${base}?page_size=1000&sort=desc`, { app: server.app });
  t.equal(edge.status, 200, 'the maximum itself is fine');
  const one = await server.request('GET', `${base}?page_size=1`, { app: server.app });
  t.equal(one.body.results.length, 1);
});

t.test("one application can never see or touch another's clients", async (t) => {
  const server = await startServer(t);
  const other = await otherApp(server);
  const theirs = await createClient(server, { name: 'Theirs', config: { hub_title: 'T' } }, other);
  const theirCredential = theirs.credentials[0].client_id;
  const mine = clientsPath(server.app);
  const attempts: Array<[string, string, unknown]> = [
    ['GET', `${mine}/${theirs.id}`, undefined],
    ['PUT', `${mine}/${theirs.id}`, { name: 'hijacked' }],
    ['DELETE', `${mine}/${theirs.id}`, undefined],
    ['POST', `${mine}/${theirs.id}/credentials`, {}],
    ['DELETE', `${mine}/${theirs.id}/credentials/${theirCredential}`, undefined],
  ];
  for (const [method, path, body] of attempts) {
    expectError(t, await server.request(method, path, { app: server.app, body }), 404, 'E_OIDC_CLIENT_NOT_FOUND');
  }
  const myList = await server.request('GET', mine, { app: server.app });
  t.same(myList.body, { total_results: 0, results: [] });
  const intact = await server.request('GET', `${clientsPath(other)}/${theirs.id}`, { app: other });
  t.equal(intact.body.name, 'Theirs');
  t.same(intact.body.credentials.map((c: any) => c.client_id), [theirCredential]);
  t.equal(intact.body.updated_at, theirs.updated_at);
  const theirList = await server.request('GET', clientsPath(other), { app: other });
  t.equal(theirList.body.total_results, 1);
});

t.test('clients survive a restart and no clear secret ever reaches the data dir', async (t) => {
  const dataDir = t.testdir();
  const first = await startServer(t, { dataDir });
  const app = first.app;
  const client = await createClient(first, { name: 'Durable' });
  const added = await first.request('POST', `${clientsPath(app)}/${client.id}/credentials`, { app, body: {} });
  const secrets = [client.credentials[0].secret, added.body.secret];
  await first.close();

  const files = filesBelow(dataDir);
  t.ok(files.length > 0, 'the data dir holds the LMDB files');
  t.ok(files.some((file) => readFileSync(file).includes(client.id)), 'the scan reads what was stored');
  for (const file of files) {
    const bytes = readFileSync(file);
    for (const secret of secrets) {
      t.notOk(bytes.includes(secret), `${file} does not hold a clear secret`);
      t.notOk(bytes.includes(secret.slice(4, 24)), `${file} does not hold part of one`);
    }
  }

  const second = await startServer(t, { dataDir });
  const read = await second.request('GET', `${clientsPath(app)}/${client.id}`, { app });
  t.equal(read.status, 200);
  t.same(read.body.credentials.map((c: any) => c.secret), secrets.map(masked));
  const list = await second.request('GET', clientsPath(app), { app });
  t.equal(list.body.total_results, 1);
});

t.test('concurrent changes to one client are serialised and the count stays exact', async (t) => {
  const server = await startServer(t);
  const client = await createClient(server);
  const path = `${clientsPath(server.app)}/${client.id}`;
  const added = await Promise.all(
    Array.from({ length: 8 }, () => server.request('POST', `${path}/credentials`, { app: server.app, body: {} })),
  );
  t.same(added.map((r) => r.status), Array(8).fill(200));
  const read = await server.request('GET', path, { app: server.app });
  t.equal(read.body.credentials.length, 9, 'no credential lost');
  t.equal(new Set(read.body.credentials.map((c: any) => c.client_id)).size, 9);

  const deletes = await Promise.all(Array.from({ length: 5 }, () => server.request('DELETE', path, { app: server.app })));
  t.same(deletes.map((r) => r.status).sort(), [204, 404, 404, 404, 404], 'exactly one delete wins');
  const list = await server.request('GET', clientsPath(server.app), { app: server.app });
  t.equal(list.body.total_results, 0, 'counted down once');
  t.same([...server.deps.store.db('oidc_credentials').getKeys({})], [], 'no orphaned credential');
});

t.test('page parameters on the create call are checked as on the list, and have no effect', async (t) => {
  const server = await startServer(t);
  const create = (query: string) => server.request('POST', `${clientsPath(server.app)}?${query}`, { app: server.app, body: { name: 'Web' } });
  t.equal((await create('page_size=5&sort=desc')).status, 200);
  for (const query of ['page_size=5000', 'sort=sideways', 'after=x', 'other=1']) t.equal((await create(query)).status, 400, query);
  t.equal((await server.request('GET', clientsPath(server.app), { app: server.app })).body.total_results, 1, 'only the first was made');
});
