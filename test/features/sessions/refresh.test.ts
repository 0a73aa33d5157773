import t from 'tap';
import { startServer } from '../../helpers/server.js';
import { meProbe as probe, profileOf, refreshWith as refresh, setUserState, signInByLink } from '../../helpers/sign-in.js';
import { manualClock } from '../../../src/lib/clock.js';

t.test('a refresh token is spent for a new pair, once', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const first = await signInByLink(server, 'ada@example.com');

  clock.advance(5 * 60_000);
  const second = await refresh(server, first.refresh_token);
  t.equal(second.status, 200);
  t.same(Object.keys(second.body).sort(), ['access_token', 'expires_in', 'refresh_token', 'token_type']);
  t.not(second.body.refresh_token, first.refresh_token);
  t.not(second.body.access_token, first.access_token);
  const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
  t.equal(claims(second.body.access_token).sid, claims(first.access_token).sid, 'same session');
  t.equal(claims(second.body.access_token).iat, Math.floor(clock.now() / 1000));
  t.equal((await probe(server, second.body.access_token)).status, 200);

  const profile = profileOf(server, first.app_user_id);
  t.equal(profile.meta.last_sign_in_method, 'refresh_token');
  t.equal(profile.meta.first_sign_in_method, 'magic_link');

  const withGrant = await server.request('POST', '/hub/auth/token', {
    body: { refresh_token: second.body.refresh_token, grant_type: 'refresh_token' },
  });
  t.equal(withGrant.status, 200, 'grant_type is accepted');
});

t.test('a reused refresh token answers 400 and kills its whole session', async (t) => {
  const server = await startServer(t);
  const stolen = await signInByLink(server, 'ada@example.com');
  const other = await signInByLink(server, 'ada@example.com');
  const rightful = await refresh(server, stolen.refresh_token);
  t.equal(rightful.status, 200);

  const reuse = await refresh(server, stolen.refresh_token);
  t.equal(reuse.status, 400);
  t.equal(reuse.body.code, 'E_INVALID_REFRESH_TOKEN');

  const sibling = await refresh(server, rightful.body.refresh_token);
  t.equal(sibling.status, 400, "the session's newest refresh token is dead too");
  const access = await probe(server, rightful.body.access_token);
  t.equal(access.status, 401, "the session's access token is refused");
  t.equal(access.body.code, 'E_TOKEN_REVOKED');
  t.equal((await probe(server, stolen.access_token)).body.code, 'E_TOKEN_REVOKED');

  t.equal((await probe(server, other.access_token)).status, 200, 'another session of the user lives on');
  t.equal((await refresh(server, other.refresh_token)).status, 200);
});

t.test('unknown, malformed and expired refresh tokens', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const unknown = await refresh(server, 'x'.repeat(43));
  t.equal(unknown.status, 400);
  t.equal(unknown.body.code, 'E_INVALID_REFRESH_TOKEN');

  for (const bad of [undefined, '', 42]) {
    const res = await refresh(server, bad);
    t.equal(res.status, 400);
    t.equal(res.body.code, 'E_VALIDATION');
    t.ok(res.body.field_errors.refresh_token);
  }
  const noBody = await server.request('POST', '/hub/auth/token');
  t.equal(noBody.body.code, 'E_VALIDATION');
  const overlong = await server.request('POST', '/hub/auth/token', { body: { refresh_token: 'x'.repeat(513), client_id: 'c'.repeat(257) } });
  t.equal(overlong.status, 400);
  t.same(
    overlong.body.field_errors,
    { refresh_token: ['must be at most 512 characters'], client_id: ['must be at most 256 characters'] },
    "in words, not the validator's",
  );

  const signedIn = await signInByLink(server, 'ada@example.com');
  clock.advance(30 * 86_400_000);
  const expired = await refresh(server, signedIn.refresh_token);
  t.equal(expired.status, 400, 'a refresh token lives 30 days');
  t.equal(expired.body.code, 'E_INVALID_REFRESH_TOKEN');
});

t.test('a disabled user can neither refresh nor use its access token', async (t) => {
  const server = await startServer(t);
  const signedIn = await signInByLink(server, 'ada@example.com');
  await setUserState(server, signedIn.app_user_id, 'disabled');
  const disabled = { status: 401, body: { code: 'E_USER_DISABLED' } };
  t.match(await probe(server, signedIn.access_token), disabled, 'the access token is refused');
  t.match(await refresh(server, signedIn.refresh_token), disabled, 'so is the refresh token');

  await setUserState(server, signedIn.app_user_id, 'enabled');
  t.equal((await refresh(server, signedIn.refresh_token)).status, 200, 'the refused refresh spent nothing');
});

t.test('an expired access token answers E_TOKEN_EXPIRED; a token for another app 403', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const signedIn = await signInByLink(server, 'ada@example.com');
  const otherApp = await server.request('POST', '/me/applications/app_01JD0000000000000000000000/signout', {
    token: signedIn.access_token,
  });
  t.equal(otherApp.status, 403);
  t.equal(otherApp.body.code, 'E_FORBIDDEN');
  clock.advance(3600_000);
  const expired = await probe(server, signedIn.access_token);
  t.equal(expired.status, 401);
  t.equal(expired.body.code, 'E_TOKEN_EXPIRED');
  t.equal((await refresh(server, signedIn.refresh_token)).status, 200, 'the refresh token outlives it');
});

t.test('a token with the signature of a verified token but another payload is refused', async (t) => {
  const server = await startServer(t);
  const ada = await signInByLink(server, 'ada@example.com');
  const bob = await signInByLink(server, 'bob@example.com');
  t.equal((await probe(server, ada.access_token)).status, 200, 'the genuine token is verified and cached');
  const [header, , signature] = ada.access_token.split('.');
  const bobsPayload = bob.access_token.split('.')[1];
  const spliced = await probe(server, `${header}.${bobsPayload}.${signature}`);
  t.equal(spliced.status, 401);
  t.equal(spliced.body.code, 'E_UNAUTHORIZED');
});

t.test('a token is taken in the one spelling it was issued in: a segment whose last character sets unused bits is refused', async (t) => {
  const server = await startServer(t);
  const ada = await signInByLink(server, 'ada@example.com');
  const [header, payload, signature] = ada.access_token.split('.');
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  /** The segment with its last character's unused low bits set to each other value: the same bytes decoded. */
  const respellings = (segment: string) => {
    const unusedBits = (segment.length * 6) % 8;
    const last = alphabet.indexOf(segment.at(-1)!);
    return Array.from({ length: (1 << unusedBits) - 1 }, (_, i) => `${segment.slice(0, -1)}${alphabet[last | (i + 1)]}`);
  };
  const variants = [
    ...respellings(signature).map((s) => `${header}.${payload}.${s}`),
    ...respellings(header).map((h) => `${h}.${payload}.${signature}`),
    ...respellings(payload).map((p) => `${header}.${p}.${signature}`),
  ];
  t.ok(respellings(signature).length >= 3, 'an Ed25519 signature has unused bits to set');
  for (const variant of variants) {
    t.same(Buffer.from(variant.split('.')[2], 'base64url'), Buffer.from(signature, 'base64url'), 'the same signature bytes');
    const res = await probe(server, variant);
    t.same([res.status, res.body.code], [401, 'E_UNAUTHORIZED'], variant.slice(-8));
  }
  t.equal((await probe(server, ada.access_token)).status, 200, 'the token as issued passes');
});

t.test('the token endpoint, open to anyone, takes a body of at most 16 KiB: 413 past it, before anything is parsed', async (t) => {
  const server = await startServer(t);
  const ada = await signInByLink(server, 'ada@example.com');
  const form = (padding: number) => `refresh_token=${ada.refresh_token}&pad=${'x'.repeat(padding)}`;
  const exact = form(0).length;
  const post = (body: string) =>
    server.request('POST', '/hub/auth/token', { rawBody: body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  const over = await post(form(16 * 1024 - exact + 1));
  t.equal(over.status, 413, '16 KiB and a byte');
  t.equal(over.body.code, 'E_PAYLOAD_TOO_LARGE');
  const json = await server.request('POST', '/hub/auth/token', { rawBody: `[${'{},'.repeat(6000)}{}]` , headers: { 'content-type': 'application/json' } });
  t.equal(json.status, 413, 'JSON too');
  const fits = await post(form(16 * 1024 - exact));
  t.equal(fits.status, 200, '16 KiB exactly: the refresh token is spent');
});

t.test('the token endpoint takes the form body OAuth clients send, and refuses what RFC 6749 refuses', async (t) => {
  const server = await startServer(t);
  const first = await signInByLink(server, 'ada@example.com');
  const form = (fields: string) =>
    server.request('POST', '/hub/auth/token', {
      rawBody: fields,
      headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' },
    });
  const token = encodeURIComponent(first.refresh_token);

  const twice = await form(`grant_type=refresh_token&refresh_token=${token}&refresh_token=${token}`);
  t.equal(twice.status, 400);
  t.same(twice.body.field_errors, { refresh_token: ['given more than once'] });
  const unknownTwice = await form(`grant_type=refresh_token&refresh_token=${token}&scope=a&scope=b`);
  t.same(unknownTwice.body.field_errors, { scope: ['given more than once'] }, 'a parameter it does not know, given twice');
  const wrongGrant = await form(`grant_type=password&refresh_token=${token}`);
  t.same(wrongGrant.body.field_errors, { grant_type: ['must be refresh_token'] });
  for (const malformed of ['client_id=100%', 'client_id=a%zz', 'client_id=%FF', 'client_id=%ED%A0%80']) {
    const res = await form(`grant_type=refresh_token&refresh_token=${token}&${malformed}`);
    t.equal(res.status, 400, `${malformed}: malformed percent-encoding is refused, as in a query string`);
    t.same(res.body.field_errors, { body: ['malformed percent-encoding (a % must start an escape of UTF-8)'] });
  }
  const latin1 = await server.request('POST', '/hub/auth/token', {
    rawBody: Buffer.concat([Buffer.from(`refresh_token=${token}&client_id=caf`), Buffer.from([0xe9])]),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.equal(latin1.status, 400, 'bytes that are not UTF-8 are refused, as in a multipart text part');
  t.same(latin1.body.field_errors, { body: ['must be UTF-8'] });

  const refreshed = await form(`grant_type=refresh_token&refresh_token=${token}&client_id=my-spa`);
  t.equal(refreshed.status, 200, 'refused requests spent nothing');
  t.same(Object.keys(refreshed.body).sort(), ['access_token', 'expires_in', 'refresh_token', 'token_type']);
  t.equal((await probe(server, refreshed.body.access_token)).status, 200);
  t.equal((await refresh(server, refreshed.body.refresh_token)).status, 200, 'the new refresh token works as JSON too');

  const elsewhere = await server.request('POST', '/hub/auth/magic', {
    app: server.app,
    rawBody: 'verification_type=email',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.equal(elsewhere.status, 415, 'other routes take JSON only');
});

t.test('the form body: parameters the endpoint does not know are ignored, one without a value is omitted (RFC 6749 §3.2)', async (t) => {
  const server = await startServer(t);
  const first = await signInByLink(server, 'ada@example.com');
  const form = (fields: string) =>
    server.request('POST', '/hub/auth/token', { rawBody: fields, headers: { 'content-type': 'application/x-www-form-urlencoded' } });

  // What AppAuth-JS sends on a refresh: redirect_uri with every token request, scope when the app names one.
  const appAuth = await form(
    `grant_type=refresh_token&client_id=my-spa&redirect_uri=${encodeURIComponent('https://app.example/cb')}&scope=openid%20profile&refresh_token=${encodeURIComponent(first.refresh_token)}`,
  );
  t.equal(appAuth.status, 200, 'redirect_uri and scope are ignored');
  t.same(Object.keys(appAuth.body).sort(), ['access_token', 'expires_in', 'refresh_token', 'token_type']);
  t.equal((await probe(server, appAuth.body.access_token)).status, 200);

  const empty = await form(`grant_type=&client_id=&__proto__=x&refresh_token=${encodeURIComponent(appAuth.body.refresh_token)}`);
  t.equal(empty.status, 200, 'an empty grant_type counts as omitted; a parameter named __proto__ is one it does not know');
  const noToken = await form('grant_type=refresh_token&refresh_token=');
  t.equal(noToken.status, 400);
  t.same(noToken.body.field_errors, { refresh_token: ['is required'] });

  const json = await refresh(server, empty.body.refresh_token);
  t.equal(json.status, 200, 'the last pair is live');
  const jsonUnknown = await server.request('POST', '/hub/auth/token', { body: { refresh_token: json.body.refresh_token, scope: 'openid' } });
  t.equal(jsonUnknown.status, 400, 'a JSON body, this service\'s own shape, still refuses an unknown key');
  t.ok(jsonUnknown.body.field_errors.scope);
});

t.test('refreshes racing with one token: one pair is issued, the rest are reuse, and the session ends', async (t) => {
  const server = await startServer(t);
  const raced = await signInByLink(server, 'ada@example.com');
  const other = await signInByLink(server, 'ada@example.com');
  const answers = await Promise.all(Array.from({ length: 5 }, () => refresh(server, raced.refresh_token)));
  t.same(answers.map((a) => a.status).sort(), [200, 400, 400, 400, 400]);
  t.same(new Set(answers.filter((a) => a.status === 400).map((a) => a.body.code)), new Set(['E_INVALID_REFRESH_TOKEN']));
  const issued = answers.find((a) => a.status === 200)!.body;
  t.equal((await refresh(server, issued.refresh_token)).status, 400, 'a client must serialise its refreshes: the pair issued is dead');
  t.equal((await probe(server, issued.access_token)).body.code, 'E_TOKEN_REVOKED');
  t.equal((await probe(server, other.access_token)).status, 200, 'another session of the user lives on');
});
