import t from 'tap';
import { startServer } from '../helpers/server.js';
import { tokenFor } from '../helpers/tokens.js';
import { setUserState } from '../helpers/sign-in.js';
import { manualClock } from '../../src/lib/clock.js';

t.test('a bearer token reads the same whether verified before or not; what the pattern refuses stays refused once warm', async (t) => {
  const server = await startServer(t);
  const { token } = await tokenFor(server, { email: 'ada@example.com' });
  const me = (authorization: string) => server.request('GET', `/me/applications/${server.app.id}/data`, { headers: { authorization } });

  const cold = await me(`Bearer ${token}`);
  t.equal(cold.status, 200, 'first use: verified');
  t.equal((await me(`Bearer ${token}`)).status, 200, 'warm');
  t.equal((await me(`bearer   ${token}`)).status, 200, 'the scheme in any case, several spaces: the pattern, then the cache');
  t.equal((await me(`Bearer  ${token}`)).status, 200, 'two spaces after the usual scheme');
  for (const authorization of [`Bearer ${token},`, `Bearer ${token}"`, `Bearer ${token} x`, `Bearer${token}`, `Basic ${token}`]) {
    const refused = await me(authorization);
    t.equal(refused.status, 401, `${authorization.replace(token, '<token>')}: refused`);
    t.equal(refused.body.code, 'E_UNAUTHORIZED');
  }
});

t.test('every 401 of a bearer route names the Bearer scheme, and says when the token sent was refused', async (t) => {
  const clock = manualClock();
  const adminToken = 'challenge-admin-token-0123456789';
  const server = await startServer(t, { clock, env: { SVC_ADMIN_TOKEN: adminToken, SVC_CORS_ORIGINS: 'https://app.example' } });
  const path = `/me/applications/${server.app.id}/data`;
  const challengeOf = async (token: string | undefined, expected: { status: number; code?: string }, route = path) => {
    const res = await server.request('GET', route, { token });
    t.match({ status: res.status, code: res.body?.code }, expected, `${expected.code ?? expected.status}`);
    return res.headers.get('www-authenticate');
  };

  t.equal(await challengeOf(undefined, { status: 401, code: 'E_UNAUTHORIZED' }), 'Bearer', 'no token: the scheme, no error');
  const refused = 'Bearer error="invalid_token"';
  t.equal(await challengeOf('not.a.jwt', { status: 401, code: 'E_UNAUTHORIZED' }), refused, 'a token that is no token of ours');

  const disabled = await tokenFor(server, { email: 'off@example.com' });
  await setUserState(server, disabled.userId, 'disabled');
  t.equal(await challengeOf(disabled.token, { status: 401, code: 'E_USER_DISABLED' }), refused);

  const signedOut = await tokenFor(server, { email: 'out@example.com' });
  t.equal(await challengeOf(signedOut.token, { status: 200 }), null, 'an answer that is no 401 has none');
  const signOut = await server.request('POST', `/me/applications/${server.app.id}/signout`, { token: signedOut.token, body: {} });
  t.equal(signOut.status, 204);
  t.equal(await challengeOf(signedOut.token, { status: 401, code: 'E_TOKEN_REVOKED' }), refused, 'warm, then revoked');

  const expiring = await tokenFor(server, { email: 'late@example.com' });
  clock.advance((server.deps.config.accessTokenTtlSeconds + 1) * 1000);
  t.equal(await challengeOf(expiring.token, { status: 401, code: 'E_TOKEN_EXPIRED' }), refused);

  t.equal(await challengeOf(undefined, { status: 401, code: 'E_UNAUTHORIZED' }, '/admin/applications'), 'Bearer', 'the admin API too');
  t.equal(await challengeOf(`${adminToken}x`, { status: 401, code: 'E_UNAUTHORIZED' }, '/admin/applications'), refused, 'a wrong admin token');
  t.equal(await challengeOf(expiring.token, { status: 401, code: 'E_UNAUTHORIZED' }, '/admin/applications'), refused, "a user's token on /admin");
  const fromBrowser = await server.request('GET', path, { headers: { origin: 'https://app.example' } });
  t.match(fromBrowser.headers.get('access-control-expose-headers'), /www-authenticate/, 'a browser client may read it');
});

t.test("a token whose iss is not this service's SVC_PUBLIC_URL is refused (ADDENDUM §4), though this service's key signed it", async (t) => {
  const dataDir = t.testdir();
  const before = await startServer(t, { dataDir, env: { SVC_PUBLIC_URL: 'https://old.example' } });
  const appId = before.app.id;
  const path = `/me/applications/${appId}/data`;
  const { token } = await tokenFor(before, { email: 'ada@example.com' });
  t.equal((await before.request('GET', path, { token })).status, 200, 'accepted by the issuer it names');
  await before.close();

  const after = await startServer(t, { dataDir, env: { SVC_PUBLIC_URL: 'https://new.example' } });
  const refused = await after.request('GET', path, { token });
  t.equal(refused.status, 401, 'refused once the service is another issuer');
  t.equal(refused.body.code, 'E_UNAUTHORIZED');
  const fresh = await tokenFor(after, { email: 'ada@example.com' }, appId);
  t.equal((await after.request('GET', path, { token: fresh.token })).status, 200, 'the same key signs tokens the new issuer takes');
});

t.test('a token verified before takes the warm path, which skips its signature and the pattern but never its revocation', async (t) => {
  const server = await startServer(t);
  const { accessTokens, signingKeys } = server.deps;
  const { token, userId } = await tokenFor(server, { email: 'ada@example.com' });
  const other = await tokenFor(server, { email: 'ada@example.com' });
  // Counted from outside: the bearer step calls `verify` unless it found the token warm, and a
  // signature check looks up its key.
  const calls = { verify: 0, keyLookups: 0 };
  const verify = accessTokens.verify.bind(accessTokens);
  accessTokens.verify = (sent) => (calls.verify++, verify(sent));
  const find = signingKeys.find.bind(signingKeys);
  signingKeys.find = (kid) => (calls.keyLookups++, find(kid));
  const me = (authorization: string) => server.request('GET', `/me/applications/${server.app.id}/data`, { headers: { authorization } });

  t.equal((await me(`Bearer ${token}`)).status, 200);
  t.same(calls, { verify: 1, keyLookups: 1 }, 'cold: the signature is checked');
  t.equal((await me(`Bearer ${token}`)).status, 200);
  t.same(calls, { verify: 1, keyLookups: 1 }, 'warm: neither verified again nor matched against the pattern');
  t.equal((await me(`bearer  ${token}`)).status, 200);
  t.same(calls, { verify: 2, keyLookups: 1 }, 'an unusual scheme takes the pattern, then the cache');
  t.equal((await me(`Bearer ${other.token}`)).status, 200, "another session's token, warm too");
  const warmed = { ...calls };

  const signOut = await server.request('POST', `/applications/${server.app.id}/users/${userId}/signout`, {
    app: server.app,
    body: { sign_out_all: true },
  });
  t.equal(signOut.status, 204);
  for (const sent of [token, other.token]) {
    const refused = await me(`Bearer ${sent}`);
    t.equal(refused.status, 401, 'sign-out everywhere refuses a warm token on the very next request');
    t.equal(refused.body.code, 'E_TOKEN_REVOKED');
  }
  t.same(calls, warmed, 'on the warm path');
});
