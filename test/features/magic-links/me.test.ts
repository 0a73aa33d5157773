import t from 'tap';
import { startServer } from '../../helpers/server.js';
import { tokenFor } from '../../helpers/tokens.js';
import { linkPath, profileOf, signInByLink } from '../../helpers/sign-in.js';
import { manualClock } from '../../../src/lib/clock.js';

t.test('POST /me/auth/magic makes a link that signs the caller in elsewhere', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const caller = await signInByLink(server, 'ada@example.com');

  const bare = await server.request('POST', '/me/auth/magic', { token: caller.access_token });
  t.equal(bare.status, 200, 'no body at all');
  t.same(Object.keys(bare.body).sort(), ['app_user_id', 'link']);
  t.equal(bare.body.app_user_id, caller.app_user_id);
  t.match(bare.body.link, new RegExp(`^${server.deps.config.publicUrl}/hub/auth/magic/[A-Za-z0-9_-]{43}$`));

  const device = await server.request('GET', linkPath(bare.body.link));
  t.equal(device.status, 200);
  t.equal(device.body.app_user_id, caller.app_user_id);
  t.equal(device.body.redirect_url, null);
  const sid = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sid;
  t.not(sid(device.body.access_token), sid(caller.access_token), 'the other device has its own session');
  t.equal((await server.request('GET', linkPath(bare.body.link))).status, 410, 'single use');

  const redirecting = await server.request('POST', '/me/auth/magic', {
    token: caller.access_token,
    body: { redirect_url: 'https://app.example.com/done', expiration: '30m' },
  });
  t.equal(redirecting.status, 200);
  clock.advance(30 * 60_000);
  t.equal((await server.request('GET', linkPath(redirecting.body.link))).status, 410, 'expiration honoured');

  const another = await server.request('POST', '/me/auth/magic', {
    token: caller.access_token,
    body: { redirect_url: 'https://app.example.com/done' },
  });
  const browser = await server.request('GET', linkPath(another.body.link));
  t.equal(browser.status, 302);
  t.match(browser.headers.get('location'), /^https:\/\/app\.example\.com\/done#access_token=/);
});

t.test('a /me link does not verify any address', async (t) => {
  const server = await startServer(t);
  const { token, userId } = await tokenFor(server, { email: 'ada@example.com' });
  const made = await server.request('POST', '/me/auth/magic', { token, body: {} });
  const redeemed = await server.request('GET', linkPath(made.body.link));
  t.equal(redeemed.status, 200);
  const profile = profileOf(server, userId);
  t.same(profile.verified_data, {});
  t.equal(profile.auth_level, 'unverified');
  t.equal(profile.meta.last_sign_in_method, 'magic_link');
});

t.test('POST /me/auth/magic refuses bad bodies and missing tokens', async (t) => {
  const server = await startServer(t);
  const { token } = await tokenFor(server, { email: 'ada@example.com' });
  for (const body of [{ redirect_url: 'ftp://x' }, { expiration: '40d' }, { extra: 1 }]) {
    const res = await server.request('POST', '/me/auth/magic', { token, body });
    t.equal(res.status, 400, JSON.stringify(body));
    t.equal(res.body.code, 'E_VALIDATION');
  }
  const anonymous = await server.request('POST', '/me/auth/magic');
  t.equal(anonymous.status, 401);
  t.equal(anonymous.body.code, 'E_UNAUTHORIZED');
  const garbage = await server.request('POST', '/me/auth/magic', { token: 'not.a.token' });
  t.equal(garbage.status, 401);
});
