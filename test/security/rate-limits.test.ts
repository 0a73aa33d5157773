import t from 'tap';
import { startServer } from '../helpers/server.js';
import { rawRequest } from '../helpers/raw-http.js';
import { tokenFor } from '../helpers/tokens.js';
import { manualClock } from '../../src/lib/clock.js';

// ADDENDUM §8: token buckets per app key, per user on /me writes, per client IP on /hub/* (and on failed /admin authentications).
const expectLimited = (t: { equal: Function; match: Function }, res: { status: number; body: any; headers: Headers }) => {
  t.equal(res.status, 429);
  t.equal(res.body.code, 'E_RATE_LIMITED');
  t.match(res.headers.get('retry-after'), /^[1-9]\d*$/);
};

t.test('per app key: a burst, then 429 with Retry-After until the bucket refills', async (t) => {
  const clock = manualClock(Date.now());
  const server = await startServer(t, { clock, env: { SVC_RATE_LIMIT_APP: '1/3' } });
  const path = `/applications/${server.app.id}/users/data`;
  for (let i = 0; i < 3; i++) t.equal((await server.request('GET', path, { app: server.app })).status, 200);
  expectLimited(t, await server.request('GET', path, { app: server.app }));
  const other = await server.deps.apps.createCredential(server.app.id);
  t.equal((await server.request('GET', path, { app: { ...server.app, ...other } })).status, 200, 'another key has its own bucket');
  clock.advance(1000);
  t.equal((await server.request('GET', path, { app: server.app })).status, 200, 'refilled after a second');
});

t.test('per user on /me writes only; reads are not limited', async (t) => {
  const clock = manualClock(Date.now());
  const server = await startServer(t, { clock, env: { SVC_RATE_LIMIT_USER_WRITES: '1/2' } });
  const { token } = await tokenFor(server, { email: 'writer@example.com' });
  const path = `/me/applications/${server.app.id}/data`;
  for (let i = 0; i < 2; i++) {
    t.equal((await server.request('PATCH', path, { token, body: { data: { first_name: `W${i}` } } })).status, 200);
  }
  expectLimited(t, await server.request('PATCH', path, { token, body: { data: { first_name: 'W3' } } }));
  for (let i = 0; i < 5; i++) t.equal((await server.request('GET', path, { token })).status, 200, 'reads pass');
  const other = await tokenFor(server, { email: 'other@example.com' });
  t.equal((await server.request('PATCH', path, { token: other.token, body: { data: {} } })).status, 200, 'another user has its own bucket');
});

t.test('per client IP on /hub/auth/*, before anything else runs', async (t) => {
  const clock = manualClock(Date.now());
  const server = await startServer(t, { clock, env: { SVC_RATE_LIMIT_HUB_IP: '1/2' } });
  for (let i = 0; i < 2; i++) t.equal((await server.request('GET', '/hub/auth/keys')).status, 200);
  expectLimited(t, await server.request('GET', '/hub/auth/keys'));
  expectLimited(t, await server.request('POST', '/hub/auth/token', { body: { refresh_token: 'x' } }));
  const unparsed = await server.request('POST', '/hub/auth/token', { headers: { 'content-type': 'application/json' }, rawBody: '{"refresh_token":' });
  expectLimited(t, unparsed);
  t.equal((await server.request('GET', '/health')).status, 200, 'other routes are not limited by it');
  clock.advance(2000);
  t.equal((await server.request('GET', '/hub/auth/keys')).status, 200);
});

t.test('behind SVC_TRUSTED_PROXIES proxies the client is the X-Forwarded-For entry the farthest one appended', async (t) => {
  const keys = (server: Awaited<ReturnType<typeof startServer>>, forwardedFor: string) =>
    server.request('GET', '/hub/auth/keys', { headers: { 'x-forwarded-for': forwardedFor } });
  const proxied = await startServer(t, { env: { SVC_RATE_LIMIT_HUB_IP: '0.001/1', SVC_TRUSTED_PROXIES: '1' } });
  t.equal((await keys(proxied, '203.0.113.1')).status, 200);
  t.equal((await keys(proxied, '203.0.113.1')).status, 429, 'one client, one bucket');
  t.equal((await keys(proxied, '203.0.113.2')).status, 200, 'another client behind the same proxy has its own');
  t.equal((await keys(proxied, '198.51.100.9, 203.0.113.1')).status, 429, 'what the client wrote itself is not believed');
  const twoHops = await startServer(t, { env: { SVC_RATE_LIMIT_HUB_IP: '0.001/1', SVC_TRUSTED_PROXIES: '2' } });
  t.equal((await keys(twoHops, '198.51.100.9, 203.0.113.5, 10.0.0.2')).status, 200);
  t.equal((await keys(twoHops, '198.51.100.7, 203.0.113.5, 10.0.0.2')).status, 429, 'the entry left of the outer proxy is the client');
  t.equal((await keys(twoHops, '203.0.113.77')).status, 200, 'too few entries: the connection counts (its first request)');
  t.equal((await keys(twoHops, '203.0.113.78')).status, 429, 'and an entry the client wrote does not make a new bucket');
  t.equal((await keys(proxied, '203.0.113.9:5000')).status, 200);
  t.equal((await keys(proxied, '203.0.113.9:5001')).status, 429, 'a port is no part of the client');
  t.equal((await keys(proxied, '[2001:db8::1]:443')).status, 200);
  t.equal((await keys(proxied, '2001:db8::1')).status, 429);
  t.equal((await keys(proxied, 'garbage-1')).status, 200, 'what is no address: the connection counts');
  t.equal((await keys(proxied, 'garbage-2')).status, 429);
  // A proxy that adds a line of its own rather than appending to the client's: the lines read as one list.
  const lines = (forwardedFor: string[]) =>
    rawRequest(twoHops.port, `GET /hub/auth/keys HTTP/1.1\r\nhost: localhost\r\n${forwardedFor.map((entry) => `x-forwarded-for: ${entry}\r\n`).join('')}connection: close\r\n\r\n`);
  t.equal((await lines(['198.51.100.9', '203.0.113.6, 10.0.0.2'])).status, 200);
  t.equal((await lines(['198.51.100.7, 203.0.113.6', '10.0.0.2'])).status, 429, 'the same client, its entry on another line');
  t.equal((await lines(['203.0.113.66', '10.0.0.2'])).status, 200, 'another client, each entry on a line of its own');
  const direct = await startServer(t, { env: { SVC_RATE_LIMIT_HUB_IP: '0.001/1' } });
  t.equal((await keys(direct, '203.0.113.1')).status, 200);
  t.equal((await keys(direct, '203.0.113.2')).status, 429, 'without trusted proxies the header counts for nothing');
});

t.test('per client IP: an IPv6 client counts by its /64, an IPv4-mapped one as its IPv4 address', async (t) => {
  const server = await startServer(t, { env: { SVC_RATE_LIMIT_HUB_IP: '0.001/1', SVC_TRUSTED_PROXIES: '1' } });
  const keys = (forwardedFor: string) => server.request('GET', '/hub/auth/keys', { headers: { 'x-forwarded-for': forwardedFor } });
  t.equal((await keys('2001:db8:1:2::1')).status, 200);
  t.equal((await keys('2001:db8:1:2::2')).status, 429, 'another address of the same /64 shares its bucket');
  t.equal((await keys('[2001:db8:1:2:ffff:ffff:ffff:ffff]:443')).status, 429, 'the last address of the /64 too');
  t.equal((await keys('2001:0DB8:0001:0002:0000:0000:0000:0009')).status, 429, 'however it is written');
  t.equal((await keys('2001:db8:1:3::1')).status, 200, 'the next /64 has its own');
  t.equal((await keys('203.0.113.20')).status, 200);
  t.equal((await keys('::ffff:203.0.113.20')).status, 429, 'an IPv4-mapped address is its IPv4 client');
  t.equal((await keys('203.0.113.21')).status, 200, 'IPv4 counts by the whole address');
});

t.test('per client IP on failed /admin authentications: the right token is not charged, and while spent every request is 429', async (t) => {
  const clock = manualClock(Date.now());
  const adminToken = 'admin-token-0123456789abcdef';
  const env = { SVC_ADMIN_TOKEN: adminToken, SVC_RATE_LIMIT_ADMIN_FAILURES: '1/3', SVC_TRUSTED_PROXIES: '1' };
  const server = await startServer(t, { clock, env });
  const admin = (client: string, authorization?: string, method = 'GET', body?: unknown) =>
    server.request(method, '/admin/applications', { headers: { 'x-forwarded-for': client, ...(authorization ? { authorization } : {}) }, body });
  const right = `Bearer ${adminToken}`;
  const wrong = 'Bearer admin-token-guess-000000';
  for (let i = 0; i < 5; i++) t.equal((await admin('203.0.113.1', right)).status, 200, 'the right token takes nothing');
  t.equal((await admin('203.0.113.1')).status, 401, 'no token is a failure');
  t.equal((await admin('203.0.113.1', wrong)).status, 401);
  t.equal((await admin('203.0.113.1', 'Basic eDp5')).status, 401);
  expectLimited(t, await admin('203.0.113.1', wrong));
  expectLimited(t, await admin('203.0.113.1', right));
  expectLimited(t, await admin('203.0.113.1', right, 'POST', { name: 'Refused' }));
  t.equal((await admin('203.0.113.2', wrong)).status, 401, 'another client has its own bucket');
  t.equal((await admin('203.0.113.2', right)).status, 200);
  clock.advance(1000);
  const list = await admin('203.0.113.1', right);
  t.equal(list.status, 200, 'refilled after a second');
  t.notOk(list.body.results.some((app: { name: string }) => app.name === 'Refused'), 'the refused request created nothing');
  t.equal((await admin('203.0.113.1', wrong)).status, 401, 'the token that refilled is taken by a failure');
  expectLimited(t, await admin('203.0.113.1', wrong));
});

t.test('a clock stepped back neither drains nor refills a bucket', async (t) => {
  const clock = manualClock(Date.now());
  const server = await startServer(t, { clock, env: { SVC_RATE_LIMIT_APP: '1/2' } });
  const path = `/applications/${server.app.id}/users/data`;
  t.equal((await server.request('GET', path, { app: server.app })).status, 200);
  clock.advance(-3_600_000);
  t.equal((await server.request('GET', path, { app: server.app })).status, 200, 'the token left is still there');
  expectLimited(t, await server.request('GET', path, { app: server.app }));
  clock.advance(1000);
  t.equal((await server.request('GET', path, { app: server.app })).status, 200, 'refilled a second after the step');
});

t.test('per client IP on /hub/app-config too: the publishable key alone, valid or not, is no way past the bucket', async (t) => {
  const clock = manualClock(Date.now());
  const server = await startServer(t, { clock, env: { SVC_RATE_LIMIT_HUB_IP: '1/2', SVC_TRUSTED_PROXIES: '1' } });
  const keyHeader = server.deps.config.names.appKeyHeader;
  const appConfig = (client: string, key: string) => server.request('GET', '/hub/app-config', { headers: { 'x-forwarded-for': client, [keyHeader]: key } });
  const refused = async (client: string, key: string) => {
    const res = await appConfig(client, key);
    expectLimited(t, res);
    t.same(res.body, { statusCode: 429, error: 'Too Many Requests', code: 'E_RATE_LIMITED', message: res.body.message, messages: [res.body.message] });
  };
  for (let i = 0; i < 2; i++) t.equal((await appConfig('203.0.113.1', server.app.key)).status, 200);
  await refused('203.0.113.1', server.app.key);
  const wrongKey = 'key_01JZZZZZZZZZZZZZZZZZZZZZZZ';
  for (let i = 0; i < 2; i++) t.equal((await appConfig('203.0.113.2', wrongKey)).status, 401);
  await refused('203.0.113.2', wrongKey);
  await refused('203.0.113.2', server.app.key);
  t.equal((await appConfig('203.0.113.3', server.app.key)).status, 200, 'another client is not refused');
  const keys = () => server.request('GET', '/hub/auth/keys', { headers: { 'x-forwarded-for': '203.0.113.3' } });
  t.equal((await keys()).status, 200);
  expectLimited(t, await keys());
  await refused('203.0.113.3', server.app.key);
  clock.advance(1000);
  t.equal((await appConfig('203.0.113.1', server.app.key)).status, 200, 'refilled after a second');
});
