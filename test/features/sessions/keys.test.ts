import t from 'tap';
import { createPublicKey, randomUUID, verify } from 'node:crypto';
import { SignJWT, importJWK } from 'jose';
import { startServer, type TestServer } from '../../helpers/server.js';
import { meProbe, signInByLink } from '../../helpers/sign-in.js';
import { resignedAsServer } from '../../helpers/tokens.js';
import { manualClock } from '../../../src/lib/clock.js';
import { SigningKeys, rotateSigningKeys, type StoredKey } from '../../../src/auth/signing-keys.js';
import { MAX_ACCESS_TOKEN_TTL_SECONDS } from '../../../src/config.js';

const decodePart = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));

/** Checks a JWT's signature against a JWKS with node:crypto alone (not the code under test). */
function verifiedByJwks(token: string, jwks: { keys: any[] }): boolean {
  const [header, payload, signature] = token.split('.');
  const jwk = jwks.keys.find((k) => k.kid === decodePart(header).kid);
  if (!jwk) return false;
  const key = createPublicKey({ key: jwk, format: 'jwk' });
  return verify(null, Buffer.from(`${header}.${payload}`), key, Buffer.from(signature, 'base64url'));
}

t.test('discovery document names absolute URLs under SVC_PUBLIC_URL', async (t) => {
  const server = await startServer(t, { env: { SVC_PUBLIC_URL: 'https://id.example.com/base/' } });
  const res = await server.request('GET', '/hub/auth/.well-known/oauth-authorization-server');
  t.equal(res.status, 200);
  t.equal(res.headers.get('cache-control'), 'no-store');
  t.same(res.body, {
    issuer: 'https://id.example.com/base',
    jwks_uri: 'https://id.example.com/base/hub/auth/keys',
    token_endpoint: 'https://id.example.com/base/hub/auth/token',
    grant_types_supported: ['refresh_token'],
    token_endpoint_auth_methods_supported: ['none'],
    response_types_supported: [],
  });
});

t.test('the metadata is also where RFC 8414 §3 has a client that knows only the issuer look for it', async (t) => {
  for (const [publicUrl, wellKnown] of [
    ['http://svc.test', '/.well-known/oauth-authorization-server'],
    ['https://id.example.com/base/', '/.well-known/oauth-authorization-server/base'],
  ]) {
    const server = await startServer(t, { env: { SVC_PUBLIC_URL: publicUrl } });
    const res = await server.request('GET', wellKnown);
    t.equal(res.status, 200, `${publicUrl}: ${wellKnown}`);
    t.equal(`${new URL(res.body.issuer).origin}${wellKnown.replace('/.well-known/oauth-authorization-server', '')}`, res.body.issuer, 'the well-known string goes before the issuer\'s path');
    t.same(res.body, (await server.request('GET', '/hub/auth/.well-known/oauth-authorization-server')).body, 'the same document');
  }
});

t.test('an access token carries exactly the ADDENDUM §4 claims and uct (API.md), and verifies against the JWKS', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const signedIn = await signInByLink(server, 'ada@example.com');
  const jwks = (await server.request('GET', '/hub/auth/keys')).body;
  t.equal(jwks.keys.length, 1);
  t.match(jwks.keys[0], { kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid: /^sig-\d+$/ });
  t.notOk('d' in jwks.keys[0], 'no private part is published');
  t.equal(jwks.keys[0].kid, `sig-${Math.floor(clock.now() / 1000)}`, 'kid: sig-<unix seconds> of the key made at first start');

  t.ok(verifiedByJwks(signedIn.access_token, jwks), 'signature checks out with node:crypto');
  const [header, payload] = signedIn.access_token.split('.');
  t.same(decodePart(header), { alg: 'EdDSA', kid: jwks.keys[0].kid, typ: 'JWT' });
  const claims = decodePart(payload);
  const iat = Math.floor(clock.now() / 1000);
  const prefix = 'https://auth.svc.io/';
  t.same(Object.keys(claims).sort(), [
    'aud',
    'exp',
    'iat',
    'iss',
    'jti',
    'sid',
    'sub',
    'uct',
    `${prefix}app_user_id`,
    `${prefix}auth_level`,
    `${prefix}is_verified_user`,
  ].sort());
  t.equal(claims.iss, server.deps.config.publicUrl);
  t.equal(claims.sub, signedIn.app_user_id);
  t.same(claims.aud, [`app:${server.app.id}`]);
  t.equal(claims.iat, iat);
  t.equal(claims.exp, iat + 3600);
  t.match(claims.jti, /^[0-9a-f-]{36}$/);
  t.match(claims.sid, /^sess_[0-9A-Z]{26}$/);
  t.equal(claims[`${prefix}app_user_id`], signedIn.app_user_id);
  t.equal(claims[`${prefix}auth_level`], 'verified');
  t.equal(claims[`${prefix}is_verified_user`], true);
  const profile = await meProbe(server, signedIn.access_token);
  t.equal(claims.uct, Date.parse(profile.body.meta.created), "the user's creation instant, which tells it from a user made again under its ID");

  const forged = Buffer.from(JSON.stringify({ ...claims, sub: 'someone_else' })).toString('base64url');
  t.notOk(verifiedByJwks(`${header}.${forged}.${signedIn.access_token.split('.')[2]}`, jwks), 'the check itself can fail');
});

t.test("a token whose user's creation instant (uct) is not a number is refused, though its key signed it", async (t) => {
  const server = await startServer(t, { clock: manualClock() });
  const signedIn = await signInByLink(server, 'ada@example.com');
  for (const uct of [String(Date.now()), null, [1]]) {
    const token = await resignedAsServer(server, signedIn.access_token, (claims) => ({ ...claims, uct }));
    const res = await meProbe(server, token);
    t.equal(res.status, 401, JSON.stringify(uct));
    t.equal(res.body.code, 'E_UNAUTHORIZED');
  }
});

t.test('rotation keeps the old public key published and valid until its tokens have expired', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const before = await signInByLink(server, 'ada@example.com');
  const oldKid = (await server.request('GET', '/hub/auth/keys')).body.keys[0].kid;

  clock.advance(10 * 60_000);
  const rotated = await rotateSigningKeys(server.deps.signingKeys);
  t.not(rotated.kid, oldKid);
  t.same(rotated.published.sort(), [oldKid, rotated.kid].sort());
  const jwks = (await server.request('GET', '/hub/auth/keys')).body;
  t.same(jwks.keys.map((k: any) => k.kid).sort(), [oldKid, rotated.kid].sort());

  const after = await signInByLink(server, 'bob@example.com');
  t.equal(decodePart(after.access_token.split('.')[0]).kid, rotated.kid, 'the new key signs');
  t.ok(verifiedByJwks(after.access_token, jwks));
  t.ok(verifiedByJwks(before.access_token, jwks), 'tokens of the old key still verify');
  const stillWorks = await server.request('POST', '/me/auth/magic', { token: before.access_token });
  t.equal(stillWorks.status, 200, 'the service still accepts the old key');

  // The old key's last token expired one lifetime after the rotation, but a process rotating keys may
  // not know the lifetime tokens were issued with: the key stays until the longest allowed has passed.
  clock.advance(3600_000 + 1);
  const early = await rotateSigningKeys(server.deps.signingKeys);
  t.ok(early.published.includes(oldKid), 'one configured lifetime later the retired key is still published');
  clock.advance(MAX_ACCESS_TOKEN_TTL_SECONDS * 1000);
  const again = await rotateSigningKeys(server.deps.signingKeys);
  t.notOk(again.published.includes(oldKid), 'the retired key is gone');
  const finalJwks = (await server.request('GET', '/hub/auth/keys')).body;
  t.notOk(finalJwks.keys.some((k: any) => k.kid === oldKid));
});

t.test('keys rotated by another process are picked up', async (t) => {
  const clock = manualClock();
  const dataDir = t.testdir();
  const server = await startServer(t, { clock, dataDir });
  const first = (await server.request('GET', '/hub/auth/keys')).body.keys.map((k: any) => k.kid);
  // A second handle on the same data dir stands in for the CLI.
  clock.advance(5_000);
  const other = await SigningKeys.open(server.deps.store, clock);
  const { kid } = await rotateSigningKeys(other);
  const published = (await server.request('GET', '/hub/auth/keys')).body.keys.map((k: any) => k.kid);
  t.same(published.sort(), [...first, kid].sort());
  const signedIn = await signInByLink(server, 'ada@example.com');
  t.equal(decodePart(signedIn.access_token.split('.')[0]).kid, kid, 'the server signs with the newest key');
});

t.test('a rotation after the clock was stepped back (NTP) still makes the new key the one that signs', async (t) => {
  const clock = manualClock();
  const dataDir = t.testdir();
  const server = await startServer(t, { clock, dataDir });
  const [oldKid] = (await server.request('GET', '/hub/auth/keys')).body.keys.map((k: any) => k.kid);
  clock.set(clock.now() - 10_000);
  // The CLI, as an operator rotates a key it fears leaked.
  const { kid, published } = await rotateSigningKeys(await SigningKeys.open(server.deps.store, clock));
  t.not(kid, oldKid, 'the rotation answers the key it made');
  t.same(published.sort(), [oldKid, kid].sort());
  const signedIn = await signInByLink(server, 'ada@example.com');
  t.equal(decodePart(signedIn.access_token.split('.')[0]).kid, kid, 'the new key signs, not the old one');
  const jwks = (await server.request('GET', '/hub/auth/keys')).body;
  t.ok(verifiedByJwks(signedIn.access_token, jwks));
});

t.test("a retired key's tokens all expire before the key is dropped: one it signs past that is refused, warm or cold", async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const genuine = await signInByLink(server, 'ada@example.com');
  const claims = decodePart(genuine.access_token.split('.')[1]);
  const [{ value: oldKey }] = [...server.deps.store.db<StoredKey>('signing_keys').getRange({})];
  // Signed with a copy of the key's private half, as one leaked with an old backup would be.
  const signedByOldKey = async (iat: number, exp: number) =>
    new SignJWT({ ...claims, iat, exp, jti: randomUUID() })
      .setProtectedHeader({ alg: 'EdDSA', kid: oldKey.kid, typ: 'JWT' })
      .sign(await importJWK(oldKey.privateJwk, 'EdDSA'));
  const now = () => Math.floor(clock.now() / 1000);
  const read = (token: string) => server.request('GET', `/me/applications/${server.app.id}/data`, { token });

  const outlivingAnyLifetime = await signedByOldKey(now(), now() + 365 * 86_400);
  const lasting = await signedByOldKey(now(), now() + MAX_ACCESS_TOKEN_TTL_SECONDS);
  t.equal((await read(lasting)).status, 200, 'the current key may sign a token of the longest lifetime');
  const refused = await read(outlivingAnyLifetime);
  t.equal(refused.status, 401, 'not one living longer: it would outlive its key');
  t.equal(refused.body.code, 'E_UNAUTHORIZED');

  // Rotated by the CLI: the server has not read the key list since.
  clock.advance(60_000);
  await rotateSigningKeys(await SigningKeys.open(server.deps.store, clock));
  clock.advance(5 * 60_000);
  const pastRetirement = await read(await signedByOldKey(now(), now() + MAX_ACCESS_TOKEN_TTL_SECONDS));
  t.equal(pastRetirement.status, 401, 'a retired key signs nothing living past one lifetime after its successor arrived');
  t.equal(pastRetirement.body.code, 'E_UNAUTHORIZED');
  t.equal((await read(await signedByOldKey(now(), now() + 3600))).status, 200, 'a token of an hour it may still sign');

  clock.advance(MAX_ACCESS_TOKEN_TTL_SECONDS * 1000);
  const { published } = await rotateSigningKeys(await SigningKeys.open(server.deps.store, clock));
  t.notOk(published.includes(oldKey.kid), 'the retired key is dropped');
  t.equal((await read(lasting)).body.code, 'E_TOKEN_EXPIRED', 'by then every token it could sign has expired, the warm one too');
  t.equal((await read(outlivingAnyLifetime)).status, 401);
});

t.test('two processes rotating in the same second make two keys: neither overwrites the other, whose tokens would then be refused', async (t) => {
  const clock = manualClock();
  const dataDir = t.testdir();
  const server = await startServer(t, { clock, dataDir });
  // Another process (the CLI) that read the key list before the server's own rotation landed.
  const other = await SigningKeys.open(server.deps.store, clock);
  const ours = await rotateSigningKeys(server.deps.signingKeys);
  const signedIn = await signInByLink(server, 'ada@example.com');
  t.equal(decodePart(signedIn.access_token.split('.')[0]).kid, ours.kid);
  const theirs = await rotateSigningKeys(other);
  t.not(theirs.kid, ours.kid, 'each key has a kid of its own');
  t.equal([...server.deps.store.db<StoredKey>('signing_keys').getKeys({})].length, 3, 'every key made is kept');

  const jwks = (await server.request('GET', '/hub/auth/keys')).body;
  t.ok(verifiedByJwks(signedIn.access_token, jwks), 'the published keys still verify the token');
  t.equal((await server.request('GET', `/me/applications/${server.app.id}/data`, { token: signedIn.access_token })).status, 200);
  await server.close();
  const restarted = await startServer(t, { clock, dataDir });
  const read = await restarted.request('GET', `/me/applications/${server.app.id}/data`, { token: signedIn.access_token });
  t.equal(read.status, 200, `a restarted server still accepts the token: ${JSON.stringify(read.body)}`);
});

t.test('a key revoked by another process: its warm tokens are refused whatever request reads the key list first', async (t) => {
  const triggers: Array<[string, (server: TestServer) => Promise<unknown>]> = [
    ['a JWKS read', (server) => server.request('GET', '/hub/auth/keys')],
    ['a sign-in (a token issued)', (server) => signInByLink(server, 'bob@example.com')],
  ];
  for (const [what, readsKeys] of triggers) {
    const clock = manualClock();
    const server = await startServer(t, { clock });
    // The once-a-second key watch stood still, so the request is what reads the key list first.
    server.deps.accessTokens.stop();
    const leaked = await signInByLink(server, 'ada@example.com');
    t.equal((await meProbe(server, leaked.access_token)).status, 200, `${what}: verified once, warm from here on`);
    // The CLI's `keys rotate --revoke`, as another process would run it.
    await rotateSigningKeys(await SigningKeys.open(server.deps.store, clock), { revoke: true });
    await readsKeys(server);
    const refused = await meProbe(server, leaked.access_token);
    t.equal(refused.status, 401, `${what} picked up the rotation: the revoked key's warm token is refused`);
    t.equal(refused.body.code, 'E_UNAUTHORIZED');
  }
});
