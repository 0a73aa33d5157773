import t from 'tap';
import { startServer } from '../../helpers/server.js';
import { tokenFor } from '../../helpers/tokens.js';
import { linkPath, meProbe, profileOf, refreshWith, registerRedirects, signInByLink } from '../../helpers/sign-in.js';
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

  await registerRedirects(server, { redirect_uris: ['https://app.example.com/done'] });
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
  const longUrl = await server.request('POST', '/me/auth/magic', { token, body: { redirect_url: `https://app.example/${'a'.repeat(2048)}` } });
  t.equal(longUrl.status, 400);
  t.same(longUrl.body.field_errors, { redirect_url: ['must be at most 2048 characters'] }, "in words, not the validator's");
  await registerRedirects(server, { allowed_origins: ['https://app.example'] });
  const withUser = await server.request('POST', '/me/auth/magic', { token, body: { redirect_url: 'https://ada@app.example/done' } });
  t.equal(withUser.status, 400, 'a user name in the URL is refused, on a registered origin too, as in an OIDC client');
  t.same(withUser.body.field_errors, { redirect_url: ['must not hold a user name or password (user@host)'] });
  const anonymous = await server.request('POST', '/me/auth/magic');
  t.equal(anonymous.status, 401);
  t.equal(anonymous.body.code, 'E_UNAUTHORIZED');
  const garbage = await server.request('POST', '/me/auth/magic', { token: 'not.a.token' });
  t.equal(garbage.status, 401);
});

t.test('a /me link lives only as long as the session that asked for it', async (t) => {
  const server = await startServer(t);
  const signOut = (userId: string, body: unknown) =>
    server.request('POST', `/applications/${server.app.id}/users/${userId}/signout`, { app: server.app, body });
  const ask = (token: string) => server.request('POST', '/me/auth/magic', { token, body: { expiration: '30d' } });

  // A platform sign-out that ends refresh leaves access tokens to run out: they must not start a session.
  const ada = await signInByLink(server, 'ada@example.com');
  const early = await ask(ada.access_token);
  t.equal(early.status, 200);
  t.equal((await signOut(ada.app_user_id, { sign_out_all: false })).status, 204);
  t.equal((await meProbe(server, ada.access_token)).status, 200, 'the access token still reads');
  const late = await ask(ada.access_token);
  t.equal(late.status, 401, 'but asks for no link');
  t.equal(late.body.code, 'E_TOKEN_REVOKED');
  t.equal((await server.request('GET', linkPath(early.body.link))).status, 410, 'a link it asked for before is revoked with the others');

  // A reused refresh token ends its session: a link that session asked for dies with it.
  const bob = await signInByLink(server, 'bob@example.com');
  const stolen = await ask(bob.access_token);
  t.equal((await refreshWith(server, bob.refresh_token)).status, 200);
  t.equal((await refreshWith(server, bob.refresh_token)).status, 400, 'the reuse ends the session');
  const redeemed = await server.request('GET', linkPath(stolen.body.link));
  t.equal(redeemed.status, 410, redeemed.text);
  t.equal(redeemed.body.code, 'E_LINK_EXPIRED');

  // Ending one session on /me leaves the links another session asked for.
  const first = await signInByLink(server, 'cy@example.com');
  const second = await signInByLink(server, 'cy@example.com');
  const ofFirst = await ask(first.access_token);
  const ofSecond = await ask(second.access_token);
  const meSignOut = await server.request('POST', `/me/applications/${server.app.id}/signout`, { token: first.access_token, body: { sign_out_all: false } });
  t.equal(meSignOut.status, 204);
  t.equal((await server.request('GET', linkPath(ofFirst.body.link))).status, 410, "the ended session's link is dead");
  t.equal((await server.request('GET', linkPath(ofSecond.body.link))).status, 200, "the other session's link works");
});
