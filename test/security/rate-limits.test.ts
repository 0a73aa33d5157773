import t from 'tap';
import { startServer } from '../helpers/server.js';
import { tokenFor } from '../helpers/tokens.js';
import { manualClock } from '../../src/lib/clock.js';

// ADDENDUM §8: token buckets per app key, per user on /me writes, per client IP on /hub/auth/*.
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
  t.equal((await server.request('GET', '/health')).status, 200, 'other routes are not limited by it');
  clock.advance(2000);
  t.equal((await server.request('GET', '/hub/auth/keys')).status, 200);
});
