import t from 'tap';
import fc from 'fast-check';
import { startServer } from '../helpers/server.js';
import { tokenFor } from '../helpers/tokens.js';
import { rawRequest, type RawResponse } from '../helpers/raw-http.js';
import { storeDigest } from '../helpers/store-digest.js';
import { buildRoutes } from '../../src/app.js';
import { manualClock } from '../../src/lib/clock.js';

// Property-based hostile input over every route: random and adversarial path segments, query strings,
// headers, content types and bodies. Never a 5xx; every refusal has the ADDENDUM §7 body and changes nothing.
// HOSTILE_RUNS raises the runs per route (the long variant); HOSTILE_SEED replays a failure.
const runs = Number(process.env.HOSTILE_RUNS ?? 20);
const seed = Number(process.env.HOSTILE_SEED ?? Date.now() % 1_000_000);
t.comment(`hostile-input seed ${seed} (replay with HOSTILE_SEED=${seed})`);

// The clock stands still: an authenticated `/me` call stamps `meta.last_active` (at most once a minute,
// refused or not: docs/API.md), and that stamp is not the change a refused request must not make.
const clock = manualClock();
const server = await startServer(t, { clock });
const { deps } = server;
const otherApp = await deps.apps.create('other');
const otherCredential = await deps.apps.createCredential(otherApp.id);
const signedIn = await tokenFor(server, { email: 'hostile@example.com' });
const stamped = await server.request('GET', `/me/applications/${server.app.id}/data`, { token: signedIn.token });
if (stamped.status !== 200 || !stamped.body.meta.last_active) throw new Error(`the first /me call answered ${stamped.status}`);
const names = deps.config.names;

const adversarialSegment = fc.oneof(
  fc.constantFrom('..', '.', '%2e%2e', '%2F', '%00', 'a%00b', '%C3%28', '%E0%A4%A', '%', '%FF%FE', '__uuid__', '__sample__'),
  fc.constant('x'.repeat(4000)),
  fc.stringMatching(/^[A-Za-z0-9_.:@|+-]{1,40}$/),
  fc.string({ maxLength: 30 }).map((s) => encodeURIComponent(s) || 'empty'),
);

const segmentFor = (param: string) =>
  param === 'app'
    ? fc.oneof({ weight: 4, arbitrary: fc.constant(server.app.id) }, { weight: 1, arbitrary: adversarialSegment })
    : param === 'user'
      ? fc.oneof(fc.constant(signedIn.userId), adversarialSegment)
      : adversarialSegment;

const queryValue = fc.oneof(
  fc.constantFrom('', '-1', '0', '1', '1001', '1e3', 'abc', 'asc', 'desc', 'true', 'small', '%00', ',,,', '%C3%28', signedIn.userId),
  fc.constant('y'.repeat(3000)),
  fc.string({ maxLength: 20 }).map(encodeURIComponent),
);
const queryName = fc.constantFrom(
  'page_size', 'after', 'sort', 'fields', 'lookup_filter', 'id_filter', 'include_duplicates', 'preview',
  'fail_on_error', 'ensured_user_id', 'update_integrations', 'x', '%00', '',
);
const query = fc
  .array(fc.tuple(queryName, queryValue), { maxLength: 4 })
  .map((pairs) => (pairs.length ? '?' + pairs.map(([k, v]) => `${k}=${v}`).join('&') : ''));

const auth = fc.constantFrom('none', 'app', 'app-wrong-secret', 'other-app', 'bearer', 'bearer-garbage');
const authHeaders = (kind: string): string[] => {
  switch (kind) {
    case 'app':
      return [`${names.appKeyHeader}: ${server.app.key}`, `${names.appSecretHeader}: ${server.app.secret}`];
    case 'app-wrong-secret':
      return [`${names.appKeyHeader}: ${server.app.key}`, `${names.appSecretHeader}: sec_wrong`];
    case 'other-app':
      return [`${names.appKeyHeader}: ${otherCredential.key}`, `${names.appSecretHeader}: ${otherCredential.secret}`];
    case 'bearer':
      return [`authorization: Bearer ${signedIn.token}`];
    case 'bearer-garbage':
      return ['authorization: Bearer eyJhbGciOiJub25lIn0.e30.'];
    default:
      return [];
  }
};

const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'multipart/form-data; boundary=XyZ',
  'multipart/form-data',
  'text/plain',
  'application/x-www-form-urlencoded',
  '',
);
const plausibleBody = fc.record(
  {
    name: fc.anything(),
    data: fc.oneof(fc.object(), fc.anything()),
    attributes: fc.oneof(fc.dictionary(fc.string(), fc.array(fc.string())), fc.anything()),
    roles: fc.oneof(fc.array(fc.string()), fc.anything()),
    value: fc.anything(),
    state: fc.oneof(fc.constantFrom('active', 'enabled', 'disabled', 'invite_pending'), fc.anything()),
    email: fc.oneof(fc.emailAddress(), fc.string()),
    config: fc.oneof(fc.object(), fc.anything()),
    sign_out_all: fc.anything(),
    refresh_token: fc.string(),
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  plausibleBody.map((b) => Buffer.from(JSON.stringify(b))),
  fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
  fc.constantFrom('{"a":', '', '\u0000', '--XyZ\r\nContent-Disposition: form-data; name="value"\r\n\r\nx\r\n--XyZ--\r\n').map((s) => Buffer.from(s)),
  fc.uint8Array({ maxLength: 256 }).map((a) => Buffer.from(a)),
);
const extraHeader = fc.constantFrom(
  [],
  ['content-length: 99999999'],
  ['x-request-id: ../../etc/passwd'],
  ['accept: application/json'],
  ['origin: https://evil.example'],
  ['transfer-encoding: chunked'],
);

const errorShapeProblems = (response: RawResponse): string | undefined => {
  let parsed: any;
  try {
    parsed = JSON.parse(response.body.toString('utf8'));
  } catch {
    return 'error body is not JSON';
  }
  if (parsed.statusCode !== response.status) return 'statusCode differs from the HTTP status';
  if (typeof parsed.code !== 'string' || !/^E_[A-Z_]+$/.test(parsed.code)) return 'code is not an E_ code';
  if (typeof parsed.error !== 'string' || typeof parsed.message !== 'string') return 'error or message missing';
  if (!Array.isArray(parsed.messages) || parsed.messages.length < 1) return 'messages missing';
  return undefined;
};

/** Every answer carries the security headers, whatever the route or outcome. */
const securityHeaderProblem = (response: RawResponse): string | undefined => {
  if (response.headers['x-content-type-options'] !== 'nosniff') return 'lacks x-content-type-options: nosniff';
  if (response.headers['cache-control'] !== 'no-store') return 'lacks cache-control: no-store';
  if ('uwebsockets' in response.headers) return 'carries the uWebSockets framework banner';
  return undefined;
};

for (const route of buildRoutes(deps)) {
  const params = route.path.split('/').filter((s) => s.startsWith(':')).map((s) => s.slice(1));
  t.test(`${route.method} ${route.path}`, async (t) => {
    const path = fc.tuple(...params.map(segmentFor)).map((values) => {
      let i = 0;
      return route.path.replace(/:[a-z_]+/gi, () => values[i++]);
    });
    const request = fc.record({ path, query, auth, contentType, body, extra: extraHeader });
    const property = fc.asyncProperty(request, async (r) => {
        const hasBody = route.method !== 'GET' && route.method !== 'DELETE';
        const chunked = r.extra.some((h) => h.startsWith('transfer-encoding'));
        const content = hasBody ? r.body : Buffer.alloc(0);
        const payload = chunked
          ? Buffer.concat([Buffer.from(content.length ? `${content.length.toString(16)}\r\n` : ''), content, Buffer.from(content.length ? '\r\n0\r\n\r\n' : '0\r\n\r\n')])
          : content;
        const lengthHeader = chunked || r.extra.some((h) => h.startsWith('content-length')) ? [] : [`content-length: ${payload.length}`];
        const head = [
          `${route.method} ${r.path}${r.query} HTTP/1.1`,
          'host: localhost',
          'connection: close',
          ...authHeaders(r.auth),
          ...(r.contentType ? [`content-type: ${r.contentType}`] : []),
          ...lengthHeader,
          ...r.extra,
        ].join('\r\n');
        const before = storeDigest(deps.store);
        const response = await rawRequest(server.port, head + '\r\n\r\n', payload);
        if (response.status >= 500) throw new Error(`${response.status}: ${response.body.toString().slice(0, 300)}`);
        const headerProblem = securityHeaderProblem(response);
        if (headerProblem) throw new Error(`${response.status} ${headerProblem}`);
        if (response.status >= 400) {
          const problem = errorShapeProblems(response);
          if (problem) throw new Error(`${response.status} ${problem}: ${response.body.toString().slice(0, 300)}`);
          if (storeDigest(deps.store) !== before) throw new Error(`a refused request (${response.status}) changed the store`);
        }
      });
    const outcome = await fc.check(property, { numRuns: runs, seed, endOnFailure: true });
    if (outcome.failed) {
      const example = JSON.stringify(outcome.counterexample, (_k, v) =>
        typeof v === 'string' && v.length > 200 ? `${v.slice(0, 200)}…(${v.length} chars)` : v,
      );
      t.fail(`${String(outcome.errorInstance).slice(0, 500)}\ncounterexample: ${example.slice(0, 3000)}\nseed ${seed}`);
    }
    const health = await server.request('GET', '/health');
    t.equal(health.status, 200, 'the server is still healthy');
  });
}

t.test('any method on any path', async (t) => {
  // uWS closes the connection on methods it does not know (FOO): a protocol-level refusal, not routed here.
  const method = fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE');
  const path = fc.array(adversarialSegment, { minLength: 0, maxLength: 6 }).map((segments) => '/' + segments.join('/'));
  const property = fc.asyncProperty(method, path, query, async (m, p, q) => {
    const before = storeDigest(deps.store);
    const response = await rawRequest(server.port, `${m} ${p}${q} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    if (response.status >= 500) throw new Error(`${response.status}: ${response.body.toString().slice(0, 300)}`);
    if (response.status >= 400 && m !== 'HEAD') {
      const problem = errorShapeProblems(response);
      if (problem) throw new Error(`${response.status} ${problem}`);
      if (storeDigest(deps.store) !== before) throw new Error('a refused request changed the store');
    }
  });
  const outcome = await fc.check(property, { numRuns: runs * 5, seed, endOnFailure: true });
  if (outcome.failed) t.fail(`${String(outcome.errorInstance).slice(0, 500)}\nseed ${seed}`);
  t.equal((await server.request('GET', '/health')).status, 200, 'the server is still healthy');
});

t.test('names and attribute keys refuse control characters; public reads ignore a cache-buster', async (t) => {
  const admin = 'admin-token-0123456789';
  const server = await startServer(t, { env: { SVC_ADMIN_TOKEN: admin } });
  const { token } = await tokenFor(server, { email: 'ctl@example.com' });
  const refused = [
    await server.request('POST', '/me/groups', { token, body: { name: 'a\u0000b' } }),
    await server.request('POST', `/applications/${server.app.id}/oidc-clients`, { app: server.app, body: { name: 'line\nbreak' } }),
    await server.request('POST', '/admin/applications', { headers: { authorization: `Bearer ${admin}` }, body: { name: 'bell\u0007' } }),
    await server.request('PATCH', `/me/applications/${server.app.id}/data`, { token, body: { attributes: { 'ns:a\u0000b': ['x'] } } }),
  ];
  for (const res of refused) t.equal(res.status, 400, res.text);
  t.equal((await server.request('GET', '/me/groups', { token })).body.total_results, 0);
  for (const path of ['/health', '/metrics', '/hub/auth/keys', '/hub/auth/.well-known/oauth-authorization-server']) {
    t.equal((await server.request('GET', `${path}?t=123`)).status, 200, path);
  }
});
