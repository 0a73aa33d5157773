import t from 'tap';
import { startServer } from '../../helpers/server.js';
import { linkPath, meProbe, profileOf, refreshWith, registerRedirects, requestLink, setUserState, signInByLink } from '../../helpers/sign-in.js';
import { storeDigest } from '../../helpers/store-digest.js';
import { manualClock } from '../../../src/lib/clock.js';
import { addressLock, userLock } from '../../../src/features/users/directory.js';
import { holdLocks, queueOn } from '../../helpers/locks.js';

t.test('a platform link ensures the user by address and signs it in once', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const made = await server.request('POST', '/hub/auth/magic', {
    app: server.app,
    body: { verification_type: 'email', data: { email: 'Ada@Example.com', first_name: 'Ada' } },
  });
  t.equal(made.status, 200);
  t.same(Object.keys(made.body).sort(), ['app_user_id', 'link']);
  const userId = made.body.app_user_id;
  t.match(made.body.link, new RegExp(`^${server.deps.config.publicUrl}/hub/auth/magic/[A-Za-z0-9_-]{43}$`));

  const fresh = profileOf(server, userId);
  t.same(fresh.data, { email: 'Ada@Example.com', first_name: 'Ada', user_id: userId }, 'new user made from data');
  t.equal(fresh.auth_level, 'unverified');
  t.same(fresh.verified_data, {});

  const again = await server.request('POST', '/hub/auth/magic', {
    app: server.app,
    body: { verification_mode: 'email', data: { email: 'ada@example.com', first_name: 'Other' } },
  });
  t.equal(again.body.app_user_id, userId, 'the same address finds the same user (alias verification_mode)');
  t.equal(profileOf(server, userId).data.first_name, 'Ada', 'data only shapes a new user');
  t.not(again.body.link, made.body.link);

  clock.advance(60_000);
  const redeemed = await server.request('GET', linkPath(made.body.link));
  t.equal(redeemed.status, 200);
  t.same(Object.keys(redeemed.body).sort(), [
    'access_token',
    'app_id',
    'app_user_id',
    'expires_in',
    'redirect_url',
    'refresh_token',
    'token_type',
  ]);
  t.equal(redeemed.body.app_user_id, userId);
  t.equal(redeemed.body.app_id, server.app.id);
  t.equal(redeemed.body.redirect_url, null);
  t.equal(redeemed.body.token_type, 'Bearer');
  t.equal(redeemed.body.expires_in, 3600);

  const signedIn = profileOf(server, userId);
  t.same(signedIn.verified_data, { email: 'Ada@Example.com' }, 'the address the link was sent to is verified');
  t.equal(signedIn.auth_level, 'verified');
  const at = new Date(clock.now()).toISOString();
  t.match(signedIn.meta, {
    first_sign_in: at,
    last_sign_in: at,
    first_sign_in_method: 'magic_link',
    last_sign_in_method: 'magic_link',
  });
  t.equal(signedIn.meta.modified, at, 'proving an address is a modification');
  const read = await server.request('GET', `/applications/${server.app.id}/users/${userId}/data`, { app: server.app });
  t.strictSame(read.body, signedIn, 'the platform GET answers the sign-in stamps, the proved address and the level');
  const own = await server.request('GET', `/me/applications/${server.app.id}/data`, { token: redeemed.body.access_token });
  t.match(own.body, { svc_user: userId, auth_level: 'verified', verified_data: { email: 'Ada@Example.com' }, meta: { first_sign_in: at, last_sign_in_method: 'magic_link' } }, 'so does /me');

  const me = await server.request('POST', '/me/auth/magic', { token: redeemed.body.access_token });
  t.equal(me.status, 200, 'the access token works on /me');

  const twice = await server.request('GET', linkPath(made.body.link));
  t.equal(twice.status, 410);
  t.equal(twice.body.code, 'E_LINK_EXPIRED');

  const unknown = await server.request('GET', '/hub/auth/magic/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
  t.equal(unknown.status, 404);
  t.equal(unknown.body.code, 'E_LINK_NOT_FOUND');

  clock.advance(60_000);
  const proved = await server.request('POST', '/hub/auth/magic', { app: server.app, body: { verification_type: 'email', data: { email: 'Ada@Example.com' } } });
  t.equal((await server.request('GET', linkPath(proved.body.link))).status, 200);
  const signedInAgain = profileOf(server, userId);
  t.equal(signedInAgain.meta.last_sign_in, new Date(clock.now()).toISOString());
  t.equal(signedInAgain.meta.modified, at, 'a sign-in proving nothing new is no modification');
});

t.test('30 days written in hours or minutes expire at 30 days, as `30d` does', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const make = async (expiration: string) => (await requestLink(server, 'ada@example.com', { expiration })).body.link as string;
  const spellings = ['30d', '720h', '43200m'];
  const early = await Promise.all(spellings.map(make));
  const late = await Promise.all(spellings.map(make));
  clock.advance(30 * 86_400_000 - 1);
  for (const [i, link] of early.entries()) t.equal((await server.request('GET', linkPath(link))).status, 200, `${spellings[i]} alive just before`);
  clock.advance(1);
  for (const [i, link] of late.entries()) t.equal((await server.request('GET', linkPath(link))).body.code, 'E_LINK_EXPIRED', `${spellings[i]} dead at 30 days`);
});

t.test('expiry: default one hour, `expiration` honoured, checked against the injected clock', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const make = async (expiration?: string) => (await requestLink(server, 'ada@example.com', { expiration })).body.link as string;
  const hourly = await make();
  const halfHour = await make('30m');
  const twoDays = await make('2d');
  const month = await make('30d');

  clock.advance(30 * 60_000);
  t.equal((await server.request('GET', linkPath(halfHour))).status, 410, '30m link dead at 30 minutes');
  clock.advance(30 * 60_000 - 1);
  t.equal((await server.request('GET', linkPath(hourly))).status, 200, '1h link alive just before the hour');
  clock.advance(2 * 86_400_000);
  t.equal((await server.request('GET', linkPath(twoDays))).body.code, 'E_LINK_EXPIRED');
  t.equal((await server.request('GET', linkPath(month))).status, 200);

  // A week after its expiry a dead link is forgotten (when its user gets a new link): then it is unknown.
  clock.advance(7 * 86_400_000);
  t.equal((await server.request('GET', linkPath(halfHour))).status, 410, 'still remembered');
  await make();
  t.equal((await server.request('GET', linkPath(halfHour))).status, 404, 'forgotten');
  t.equal((await server.request('GET', linkPath(month))).status, 410, 'a used link within retention still answers 410');
});

t.test('a phone link verifies the phone number; user_id names (or creates) the user', async (t) => {
  const server = await startServer(t);
  const made = await server.request('POST', '/hub/auth/magic', {
    app: server.app,
    body: { verification_type: 'phone', data: { phone_number: '+1 555 0100' }, user_id: 'ext-42' },
  });
  t.equal(made.status, 200);
  t.equal(made.body.app_user_id, 'ext-42');
  t.equal(profileOf(server, 'ext-42').data.phone_number, '+1 555 0100');
  await server.request('GET', linkPath(made.body.link));
  const profile = profileOf(server, 'ext-42');
  t.same(profile.verified_data, { phone_number: '+1 555 0100' });
  t.equal(profile.auth_level, 'verified');
});

t.test('302 to redirect_url with the tokens in the fragment; JSON when asked for', async (t) => {
  const server = await startServer(t);
  await registerRedirects(server, { redirect_uris: ['https://app.example.com/welcome?x=1'] });
  const make = async () =>
    (await requestLink(server, 'ada@example.com', { redirect_url: 'https://app.example.com/welcome?x=1#old' })).body;
  const browser = await make();
  const res = await server.request('GET', linkPath(browser.link), { headers: { accept: 'text/html' } });
  t.equal(res.status, 302);
  const location = new URL(res.headers.get('location')!);
  t.equal(`${location.origin}${location.pathname}${location.search}`, 'https://app.example.com/welcome?x=1');
  const fragment = new URLSearchParams(location.hash.slice(1));
  t.same([...fragment.keys()].sort(), ['access_token', 'app_id', 'app_user_id', 'expires_in', 'refresh_token', 'token_type']);
  t.equal(fragment.get('app_user_id'), browser.app_user_id);
  t.equal(fragment.get('app_id'), server.app.id);
  const me = await server.request('POST', '/me/auth/magic', { token: fragment.get('access_token')! });
  t.equal(me.status, 200, 'the fragment token works');
  const refreshed = await server.request('POST', '/hub/auth/token', { body: { refresh_token: fragment.get('refresh_token') } });
  t.equal(refreshed.status, 200, 'the fragment refresh token works');

  const api = await make();
  const json = await server.request('GET', linkPath(api.link), { headers: { accept: 'application/json' } });
  t.equal(json.status, 200);
  t.equal(json.body.redirect_url, 'https://app.example.com/welcome?x=1#old');
  t.type(json.body.access_token, 'string');
});

t.test('Accept: a media range with q=0 refuses JSON rather than asking for it; any other weight asks for it; only application/json itself asks', async (t) => {
  const server = await startServer(t);
  await registerRedirects(server, { redirect_uris: ['https://app.example.com/welcome'] });
  const accepts = {
    'application/json;q=0': 302,
    'text/html, application/json; q=0.000': 302,
    'Application/JSON;charset=utf-8;Q=0.0, text/html': 302,
    'application/json;q=0.5': 200,
    'text/html;q=0, application/json': 200,
    'application/json;q=0.001': 200,
    'text/html': 302,
    ' application/json ': 200,
    'text/html, APPLICATION/JSON ;q=1': 200,
    'application/jsonx': 302,
    'text/html, application/json-seq': 302,
    'image/avif,xapplication/json': 302,
    'text/html,application/*;q=0.9,*/*;q=0.8': 302,
  };
  for (const [accept, status] of Object.entries(accepts)) {
    const { link } = (await requestLink(server, 'ada@example.com', { redirect_url: 'https://app.example.com/welcome' })).body;
    const res = await server.request('GET', linkPath(link), { headers: { accept } });
    t.equal(res.status, status, accept);
  }
});

t.test('a disabled user cannot redeem its link, which stays usable once enabled', async (t) => {
  const server = await startServer(t);
  const made = await requestLink(server, 'ada@example.com');
  const userId = made.body.app_user_id;
  await setUserState(server, userId, 'disabled');
  const refused = await server.request('GET', linkPath(made.body.link));
  t.equal(refused.status, 401);
  t.equal(refused.body.code, 'E_USER_DISABLED');
  t.same(profileOf(server, userId).verified_data, {}, 'nothing changed');
  await setUserState(server, userId, 'enabled');
  t.equal((await server.request('GET', linkPath(made.body.link))).status, 200);
});

t.test('bad requests answer 400 with field_errors and create nothing', async (t) => {
  const server = await startServer(t);
  await registerRedirects(server, { allowed_origins: ['https://app.example'] });
  const cases: Array<[unknown, string]> = [
    [{ data: { email: 'a@example.com' } }, 'verification_type'],
    [{ verification_type: 'fax', data: { email: 'a@example.com' } }, 'verification_type'],
    [{ verification_type: 'email', verification_mode: 'phone', data: { email: 'a@example.com' } }, 'verification_mode'],
    [{ verification_type: 'email', data: { first_name: 'A' } }, 'data.email'],
    [{ verification_type: 'email', data: { email: 'not-an-address' } }, 'data.email'],
    [{ verification_type: 'phone', data: { email: 'a@example.com' } }, 'data.phone_number'],
    [{ verification_type: 'phone', data: { phone_number: 'call me' } }, 'data.phone_number'],
    [{ verification_type: 'email', data: { email: 'a@example.com', user_id: 'x' } }, 'data'],
    [{ verification_type: 'email', data: 'a@example.com' }, 'data'],
    [{ verification_type: 'email', data: { email: 'a@example.com' }, expiration: '31d' }, 'expiration'],
    [{ verification_type: 'email', data: { email: 'a@example.com' }, expiration: '1w' }, 'expiration'],
    [{ verification_type: 'email', data: { email: 'a@example.com' }, expiration: '0h' }, 'expiration'],
    // At most 30 days in any unit.
    [{ verification_type: 'email', data: { email: 'a@example.com' }, expiration: '721h' }, 'expiration'],
    [{ verification_type: 'email', data: { email: 'a@example.com' }, expiration: '43201m' }, 'expiration'],
    [{ verification_type: 'email', data: { email: 'a@example.com' }, redirect_url: 'javascript:alert(1)' }, 'redirect_url'],
    [{ verification_type: 'email', data: { email: 'a@example.com' }, redirect_url: '/relative' }, 'redirect_url'],
    // On a registered origin, but with a user name, as an OIDC client's URLs may not have.
    [{ verification_type: 'email', data: { email: 'a@example.com' }, redirect_url: 'https://ada@app.example/cb' }, 'redirect_url'],
    [{ verification_type: 'email', data: { email: 'a@example.com' }, redirect_url: 'https://ada:pw@app.example/cb' }, 'redirect_url'],
    [{ verification_type: 'email', data: { email: 'a@example.com' }, user_id: 'has space' }, 'user_id'],
    [{ verification_type: 'email', data: { email: 'a@example.com' }, user_id: '__sample__' }, 'user_id'],
    [{ verification_type: 'email', data: { email: 'a@example.com' }, user_id: '__uuid__' }, 'user_id'],
    [{ verification_type: 'email', data: [] }, 'data'],
    [[], 'body'],
    [{ verification_type: 'email', data: { email: 'a@example.com' }, group_to_join: 'nope' }, 'group_to_join'],
    [{ verification_type: 'email', data: { email: 'a@example.com' }, surprise: true }, 'surprise'],
  ];
  const before = storeDigest(server.deps.store);
  for (const [body, field] of cases) {
    const res = await server.request('POST', '/hub/auth/magic', { app: server.app, body });
    t.equal(res.status, 400, JSON.stringify(body));
    t.equal(res.body.code, 'E_VALIDATION');
    t.ok(Object.keys(res.body.field_errors ?? {}).some((key) => key.startsWith(field)), `${field} named: ${res.text}`);
  }
  t.equal(storeDigest(server.deps.store), before, 'nothing was stored');

  const noAuth = await server.request('POST', '/hub/auth/magic', { body: cases[0][0] });
  t.equal(noAuth.status, 401);
  const wrongSecret = await requestLink(server, 'a@example.com', {}, { ...server.app, secret: 'sec_wrong' });
  t.equal(wrongSecret.status, 401);
});

t.test('group_to_join naming no group is refused, and no user is made', async (t) => {
  const server = await startServer(t);
  const res = await requestLink(server, 'a@example.com', { group_to_join: 'group_01JD0000000000000000000000' });
  t.equal(res.status, 400);
  t.ok(res.body.field_errors.group_to_join);
  t.equal(server.deps.users.count(server.app.id), 0);
});

t.test('two redemptions racing for one link: exactly one wins', async (t) => {
  const server = await startServer(t);
  const made = await requestLink(server, 'ada@example.com');
  const answers = await Promise.all(Array.from({ length: 5 }, () => server.request('GET', linkPath(made.body.link))));
  t.same(answers.map((a) => a.status).sort(), [200, 410, 410, 410, 410]);
});

t.test('a redemption that waited behind its user\'s deletion answers 404, as the next one does', async (t) => {
  const server = await startServer(t);
  const made = await requestLink(server, 'gone@example.com');
  const userId = made.body.app_user_id;
  const lock = userLock(server.app.id, userId);
  const release = await holdLocks(server, [lock]);
  const deleted = await queueOn(server, lock, () =>
    server.request('DELETE', `/applications/${server.app.id}/users/${userId}/data`, { app: server.app }),
  );
  const redeemed = await queueOn(server, lock, () => server.request('GET', linkPath(made.body.link)));
  release();
  t.equal((await deleted.answer).status, 204);
  const answer = await redeemed.answer;
  t.equal(answer.status, 404, answer.text);
  t.equal(answer.body.code, 'E_LINK_NOT_FOUND');
});

t.test('data is checked against the app schema, and shapes the new user', async (t) => {
  const server = await startServer(t);
  await server.deps.apps.update(server.app.id, {
    schema: { fields: { age: { type: 'number' } }, allow_unknown_fields: false },
  });
  const before = storeDigest(server.deps.store);
  const wrongType = await requestLink(server, 'ada@example.com', { data: { email: 'ada@example.com', age: 'old' } });
  t.equal(wrongType.status, 400);
  t.equal(wrongType.body.code, 'E_VALIDATION');
  t.ok(wrongType.body.field_errors['data.age']);
  const unknown = await requestLink(server, 'ada@example.com', { data: { email: 'ada@example.com', nickname: 'A' } });
  t.ok(unknown.body.field_errors['data.nickname']);
  t.equal(storeDigest(server.deps.store), before, 'nothing was stored');

  const made = await requestLink(server, 'ada@example.com', { data: { email: 'ada@example.com', age: 36 } });
  t.equal(made.status, 200);
  t.same(profileOf(server, made.body.app_user_id).data, { email: 'ada@example.com', age: 36, user_id: made.body.app_user_id });

  await server.deps.apps.update(server.app.id, {
    schema: { fields: { age: { type: 'number' }, plan: { type: 'string', required: true } }, allow_unknown_fields: false },
  });
  const existing = await requestLink(server, 'ada@example.com', { data: { email: 'ada@example.com' } });
  t.equal(existing.status, 200, `data without the required field does not stop a link for an existing user: ${existing.text}`);
  t.equal(existing.body.app_user_id, made.body.app_user_id);
});

t.test('a null in data names no value: the new user holds none, as after a profile write', async (t) => {
  const server = await startServer(t);
  await server.deps.apps.update(server.app.id, {
    schema: { fields: { age: { type: 'number' }, picture: { type: 'image' } }, allow_unknown_fields: false },
  });
  const made = await requestLink(server, 'ada@example.com', { data: { email: 'ada@example.com', age: null, picture: null, nickname: null } });
  t.equal(made.status, 200, made.text);
  const userId = made.body.app_user_id;
  t.strictSame(profileOf(server, userId).data, { email: 'ada@example.com', user_id: userId }, 'no null stored, not even for a field the schema refuses');
  const byId = await requestLink(server, 'bo@example.com', { user_id: 'ext-bo', data: { email: 'bo@example.com', age: null } });
  t.equal(byId.status, 200, byId.text);
  t.strictSame(profileOf(server, 'ext-bo').data, { email: 'bo@example.com', user_id: 'ext-bo' }, 'a user named by user_id too');
});

t.test('data is checked against the schema as it is in the turn that makes the user, not as it was when the request came', async (t) => {
  const server = await startServer(t);
  await server.deps.apps.update(server.app.id, { schema: { fields: {}, allow_unknown_fields: true } });
  const lock = userLock(server.app.id, 'late');
  const release = await holdLocks(server, [lock]);
  const queued = await queueOn(server, lock, () =>
    server.request('POST', '/hub/auth/magic', {
      app: server.app,
      body: { verification_type: 'email', user_id: 'late', data: { email: 'late@example.com', legacy: 'x' } },
    }),
  );
  await server.deps.apps.update(server.app.id, { schema: { fields: {}, allow_unknown_fields: false } });
  release();
  const answer = await queued.answer;
  t.equal(answer.status, 400, answer.text);
  t.equal(answer.body.code, 'E_VALIDATION');
  t.ok(answer.body.field_errors?.['data.legacy'], 'names the field the schema stopped allowing');
  t.equal(server.deps.users.get(server.app.id, 'late'), undefined, 'no user was made');
});

t.test('a link checker\'s HEAD spends nothing (405); parameters a mail tool appends are ignored', async (t) => {
  const server = await startServer(t);
  await registerRedirects(server, { allowed_origins: ['https://app.example'] });
  const made = await requestLink(server, 'scan@example.com', { redirect_url: 'https://app.example/in' });
  t.equal(made.status, 200);
  const head = await fetch(`${server.url}${linkPath(made.body.link)}`, { method: 'HEAD', redirect: 'manual' });
  t.equal(head.status, 405);
  t.equal(head.headers.get('allow'), 'GET');
  t.equal(profileOf(server, made.body.app_user_id).meta.last_sign_in, undefined, 'nobody signed in');
  const redeemed = await server.request('GET', `${linkPath(made.body.link)}?utm_source=newsletter`, { headers: { accept: 'application/json' } });
  t.equal(redeemed.status, 200, 'the link is still unspent, and answers with the parameters appended');
  t.equal(redeemed.body.app_user_id, made.body.app_user_id);
});

t.test('an address a signed-in user wrote into its own profile, unproved, signs no one in to that account', async (t) => {
  const { startServerWithSchema } = await import('../../helpers/schema.js');
  const rights = { type: 'string' as const, user_readable: true, user_writable: true };
  const server = await startServerWithSchema(t, { fields: { email: rights, nickname: rights } });
  const appId = server.app.id;
  const mallory = await signInByLink(server, 'mallory@example.com');
  // Once proved, an address finds its holder though it has signed in.
  t.equal((await requestLink(server, 'mallory@example.com')).body.app_user_id, mallory.app_user_id);
  const claimed = await server.request('PATCH', `/me/applications/${appId}/data`, { token: mallory.access_token, body: { data: { email: 'Victim@Example.com' } } });
  t.equal(claimed.status, 200, claimed.text);
  t.same(server.deps.users.findByAddress(appId, 'email', 'victim@example.com'), [mallory.app_user_id], 'the lookup finds her by it');

  const victim = await requestLink(server, 'victim@example.com');
  t.equal(victim.status, 200);
  t.not(victim.body.app_user_id, mallory.app_user_id, 'a link to the address makes its own user');
  const group = await server.request('POST', `/applications/${appId}/groups`, { app: server.app, body: { name: 'Team' } });
  const invite = await server.request('POST', `/applications/${appId}/groups/${group.body.id}/invites`, {
    app: server.app,
    body: { email: 'victim@example.com', roles: ['member'] },
  });
  t.equal(invite.status, 200, invite.text);
  t.equal(invite.body.invitation.ensured_user_id, victim.body.app_user_id, 'an invite to it names that user, not hers');

  // What the app wrote, into a user that never signed in, it stands by: such a user is found.
  const made = await server.request('PUT', `/applications/${appId}/users/imported/data`, { app: server.app, body: { data: { email: 'carol@example.com' } } });
  t.equal(made.status, 200, made.text);
  t.equal((await requestLink(server, 'carol@example.com')).body.app_user_id, 'imported');
  // The address she proved and then wrote over is no longer hers: it no longer finds her either.
  t.not((await requestLink(server, 'mallory@example.com')).body.app_user_id, mallory.app_user_id);
});

t.test('where users may not write an address, its oldest holder is found as ever, signed in or not', async (t) => {
  const { startServerWithSchema } = await import('../../helpers/schema.js');
  const server = await startServerWithSchema(t, { fields: { email: { type: 'string' as const, user_readable: true } } });
  const appId = server.app.id;
  const signedIn = await signInByLink(server, 'first@example.com');
  const moved = await server.request('PATCH', `/applications/${appId}/users/${signedIn.app_user_id}/data`, { app: server.app, body: { data: { email: 'moved@example.com' } } });
  t.equal(moved.status, 200, moved.text);
  t.equal((await requestLink(server, 'moved@example.com')).body.app_user_id, signedIn.app_user_id, 'only the app can have written it');
});

t.test('a link for an address whose holder changed while it waited is made for the new holder, under its lock, in a new attempt', async (t) => {
  const { startServerWithSchema } = await import('../../helpers/schema.js');
  const server = await startServerWithSchema(t, { fields: { email: { type: 'string' as const, user_readable: true } } });
  const appId = server.app.id;
  const put = (userId: string) => server.request('PUT', `/applications/${appId}/users/${userId}/data`, { app: server.app, body: { data: { email: 'shared@example.com' } } });
  t.equal((await put('older')).status, 200);
  t.equal((await put('newer')).status, 200);
  // `older` signs in by another address: it holds shared@ only while users may not write that field.
  const elsewhere = await requestLink(server, 'elsewhere@example.com', { user_id: 'older' });
  t.equal((await server.request('GET', linkPath(elsewhere.body.link))).status, 200);
  t.equal((await requestLink(server, 'shared@example.com')).body.app_user_id, 'older', 'the oldest holder while only the app writes it');

  const lock = addressLock(appId, 'email', 'shared@example.com');
  const release = await holdLocks(server, [lock]);
  const queued = await queueOn(server, lock, () => requestLink(server, 'shared@example.com'));
  // While the request waits (holding off `older`'s lock, the holder it found), users get to write emails:
  // an unproved address written by a user who signed in names no one, so `newer` holds it now.
  await server.deps.apps.update(appId, { schema: { fields: { email: { type: 'string', user_readable: true, user_writable: true } }, allow_unknown_fields: true } });
  // A turn on `newer` is under way: the link must wait for it, in an attempt that takes `newer`'s lock.
  const newerLock = userLock(appId, 'newer');
  const releaseNewer = await holdLocks(server, [newerLock]);
  await queueOn(server, newerLock, () => {
    release();
    return queued.answer;
  });
  releaseNewer();
  const answer = await queued.answer;
  t.equal(answer.status, 200, answer.text);
  t.equal(answer.body.app_user_id, 'newer', 'made for the holder found in the turn');
  const redeemed = await server.request('GET', linkPath(answer.body.link));
  t.equal(redeemed.status, 200, redeemed.text);
  t.equal(redeemed.body.app_user_id, 'newer');
  t.same(profileOf(server, 'newer').verified_data, { email: 'shared@example.com' }, 'the new holder proved it');
});

t.test('an address moved away from its verified value is no longer verified: it signs no one in to that account, nor reads as proved', async (t) => {
  const { signInByLink, refreshWith } = await import('../../helpers/sign-in.js');
  const { decodeJwt } = await import('jose');
  const server = await startServer(t);
  const appId = server.app.id;
  const claims = (token: string) => {
    const payload = decodeJwt(token);
    const prefix = server.deps.config.names.claimPrefix;
    return { auth_level: payload[`${prefix}auth_level`], is_verified_user: payload[`${prefix}is_verified_user`] };
  };
  const alice = await signInByLink(server, 'Alice@Example.com');
  const recased = await server.request('PATCH', `/me/applications/${appId}/data`, { token: alice.access_token, body: { data: { email: 'alice@example.com' } } });
  t.same(recased.body.verified_data, { email: 'Alice@Example.com' }, 'the same address written otherwise stays proved');

  const moved = await server.request('PATCH', `/me/applications/${appId}/data`, { token: alice.access_token, body: { data: { email: 'victim@example.com' } } });
  t.equal(moved.status, 200, moved.text);
  t.same(moved.body.verified_data, {}, 'the written address is not proved, and the old one is no longer hers');
  t.equal(moved.body.auth_level, 'unverified');
  const refreshed = await refreshWith(server, alice.refresh_token);
  t.same(claims(refreshed.body.access_token), { auth_level: 'unverified', is_verified_user: false }, 'her next token does not claim a verified user');
  t.not((await requestLink(server, 'alice@example.com')).body.app_user_id, alice.app_user_id, 'the address she left signs no one in to her account');

  // The app moving an address does the same; a write that leaves the addresses alone keeps them proved.
  const bob = await signInByLink(server, 'bob@example.com');
  const path = `/applications/${appId}/users/${bob.app_user_id}/data`;
  t.same((await server.request('PATCH', path, { app: server.app, body: { data: { first_name: 'Bob' } } })).body.verified_data, { email: 'bob@example.com' });
  const byApp = await server.request('PATCH', path, { app: server.app, body: { data: { email: 'robert@example.com' } } });
  t.same(byApp.body.verified_data, {});
  t.equal(byApp.body.auth_level, 'unverified');
  t.not((await requestLink(server, 'bob@example.com')).body.app_user_id, bob.app_user_id);
  const link = await requestLink(server, 'robert@example.com', { user_id: bob.app_user_id });
  const proved = await server.request('GET', linkPath(link.body.link));
  t.same(profileOf(server, bob.app_user_id).verified_data, { email: 'robert@example.com' }, 'the address the app wrote, once proved, is verified');
  t.equal(claims(proved.body.access_token).is_verified_user, true);
});

t.test('a link made for an address signs its user in only while that user holds the address', async (t) => {
  const server = await startServer(t);
  const appId = server.app.id;
  const made = await requestLink(server, 'dan@example.com');
  const danId = made.body.app_user_id;
  // The app gives Dan's account another address, and dan@ to a user of its own, before Dan's link is used.
  const moved = await server.request('PATCH', `/applications/${appId}/users/${danId}/data`, { app: server.app, body: { data: { email: 'erin@example.com' } } });
  t.equal(moved.status, 200, moved.text);
  const other = await server.request('PUT', `/applications/${appId}/users/dan2/data`, { app: server.app, body: { data: { email: 'dan@example.com' } } });
  t.equal(other.status, 200, other.text);
  const before = storeDigest(server.deps.store);
  const refused = await server.request('GET', linkPath(made.body.link));
  t.equal(refused.status, 410, refused.text);
  t.equal(refused.body.code, 'E_LINK_EXPIRED');
  t.equal(storeDigest(server.deps.store), before, 'no one signed in; dan@ is not proved on the account it left');
  t.equal((await requestLink(server, 'dan@example.com')).body.app_user_id, 'dan2', 'the address names its holder now');

  // A link that named its user by ID verifies the address it carries, whatever the user holds.
  const named = await requestLink(server, 'frank@example.com', { user_id: danId });
  t.equal((await server.request('GET', linkPath(named.body.link))).status, 200);
  t.same(profileOf(server, danId).verified_data, { email: 'frank@example.com' });
});

t.test('after the clock is stepped back (NTP), a user made in the span it reads again still signs in', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const first = await signInByLink(server, 'ada@example.com');
  clock.advance(-3600_000);
  const again = await signInByLink(server, 'ada@example.com');
  t.equal(again.app_user_id, first.app_user_id, 'the same user, by a link made after its creation');
  t.equal((await meProbe(server, again.access_token)).status, 200, 'its session is not taken for one of a user deleted before');
  const refreshed = await refreshWith(server, again.refresh_token);
  t.equal(refreshed.status, 200);
  const made = await server.request('POST', '/me/auth/magic', { token: refreshed.body.access_token });
  t.equal(made.status, 200);
  t.equal((await server.request('GET', linkPath(made.body.link))).status, 200, 'a /me link too');
});
