import t from 'tap';
import { startServerWithSchema } from '../../helpers/schema.js';
import { tokenFor } from '../../helpers/tokens.js';
import { linkPath, signInByLink } from '../../helpers/sign-in.js';
import { manualClock } from '../../../src/lib/clock.js';
import type { TestServer } from '../../helpers/server.js';
import { meView } from '../../../src/features/users/view-record.js';
import { schemaStampOf } from '../../../src/features/applications/store.js';

const schema = {
  fields: {
    nickname: { type: 'string' as const, user_readable: true, user_writable: true },
    age: { type: 'number' as const, user_readable: true, user_writable: true },
    tier: { type: 'string' as const, user_readable: true },
    internal_score: { type: 'number' as const },
  },
  allow_unknown_fields: true,
};

/** A user whose profile the app filled, and a token for it. */
async function userWithProfile(server: TestServer) {
  const { userId, token } = await tokenFor(server, { user_id: 'me-1' });
  const seeded = await server.request('PUT', `/applications/${server.app.id}/users/${userId}/data`, {
    app: server.app,
    body: {
      data: { email: 'me@example.com', nickname: 'n', tier: 'gold', internal_score: 7, crm_note: 'x' },
      attributes: { 'svc:app_variants': ['web'], 'prefs:colors': ['red'] },
    },
  });
  if (seeded.status !== 200) throw new Error(seeded.text);
  return { userId, token, me: `/me/applications/${server.app.id}/data` };
}

t.test('GET /me shows only user-readable data', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const { userId, token, me } = await userWithProfile(server);
  const res = await server.request('GET', me, { token });
  t.equal(res.status, 200);
  t.same(res.body.data, { email: 'me@example.com', nickname: 'n', tier: 'gold', user_id: userId });
  t.equal(res.body.svc_user, userId);
  t.same(res.body.attributes, { 'svc:app_variants': ['web'], 'prefs:colors': ['red'] });
  t.equal((await server.request('GET', me)).status, 401, 'a token is required');
});

t.test('PUT /me replaces what the user may write; the rest keeps its values', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const { userId, token, me } = await userWithProfile(server);
  const readBack = (await server.request('GET', me, { token })).body;
  const roundTrip = await server.request('PUT', me, { token, body: { data: readBack.data, attributes: readBack.attributes } });
  t.equal(roundTrip.status, 200, `a profile sent back as read is accepted: ${roundTrip.text}`);

  const replaced = await server.request('PUT', me, { token, body: { data: { nickname: 'new' } } });
  t.equal(replaced.status, 200, replaced.text);
  t.same(replaced.body.data, { nickname: 'new', tier: 'gold', user_id: userId }, 'email (writable, omitted) is gone; tier kept');
  const platform = await server.request('GET', `/applications/${server.app.id}/users/${userId}/data`, { app: server.app });
  t.same(platform.body.data, { nickname: 'new', tier: 'gold', internal_score: 7, crm_note: 'x', user_id: userId }, 'hidden fields kept');

  const forbidden = await server.request('PUT', me, { token, body: { data: { nickname: 'z', tier: 'platinum', internal_score: 99, new_field: 1 } } });
  t.equal(forbidden.status, 400);
  t.equal(forbidden.body.code, 'E_USER_UPDATE_FAILED');
  t.same(Object.keys(forbidden.body.field_errors).sort(), ['internal_score', 'new_field', 'tier']);
  const patchForbidden = await server.request('PATCH', me, { token, body: { data: { tier: 'platinum' } } });
  t.equal(patchForbidden.status, 400);
  t.ok(patchForbidden.body.field_errors.tier);
  t.equal((await server.request('GET', me, { token })).body.data.nickname, 'new', 'a refused write changes nothing');

  const merged = await server.request('PATCH', me, { token, body: { data: { age: 30 } } });
  t.same(merged.body.data, { nickname: 'new', age: 30, tier: 'gold', user_id: userId });
});

t.test('a field the user cannot read is refused whatever value is sent: no answer tells its value or presence', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const { token, me } = await userWithProfile(server);
  const field = (name: string) => `${me}/fields/${name}`;
  // internal_score is 7 and crm_note 'x' (outside the schema); never_set is absent.
  const probes: Array<[string, string, object]> = [
    ['PATCH', me, { data: { internal_score: 7 } }],
    ['PATCH', me, { data: { internal_score: 8 } }],
    ['PUT', me, { data: { internal_score: 7 } }],
    ['PATCH', me, { data: { crm_note: 'x' } }],
    ['PATCH', me, { data: { crm_note: 'y' } }],
    ['PATCH', me, { data: { crm_note: null } }],
    ['PATCH', me, { data: { never_set: null } }],
    ['PUT', field('internal_score'), { value: 7 }],
    ['PUT', field('internal_score'), { value: 8 }],
    ['PUT', field('crm_note'), { value: 'x' }],
    ['PUT', field('never_set'), { value: 'x' }],
  ];
  for (const [method, path, body] of probes) {
    const res = await server.request(method, path, { token, body });
    t.equal(res.status, 400, `${method} ${JSON.stringify(body)}`);
    t.equal(res.body.code, 'E_USER_UPDATE_FAILED');
  }
  const platform = await server.request('GET', `/applications/${server.app.id}/users/me-1/data`, { app: server.app });
  t.match(platform.body.data, { internal_score: 7, crm_note: 'x' }, 'nothing changed');
  t.notOk('never_set' in platform.body.data);
});

t.test('/me profile routes refuse query parameters they do not take', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const { token, me } = await userWithProfile(server);
  t.equal((await server.request('GET', `${me}?bogus=1`, { token })).status, 400);
  t.equal((await server.request('PATCH', `${me}?bogus=1`, { token, body: { data: { nickname: 'q' } } })).status, 400);
  t.equal((await server.request('PUT', `${me}/fields/nickname?bogus=1`, { token, body: { value: 'q' } })).status, 400);
  t.equal((await server.request('PATCH', `${me}?update_integrations=maybe`, { token, body: { data: { nickname: 'q' } } })).status, 400);
  t.equal((await server.request('GET', me, { token })).body.data.nickname, 'n', 'nothing changed');
  t.equal((await server.request('PATCH', `${me}?update_integrations=true`, { token, body: { data: { nickname: 'q' } } })).status, 200);
});

t.test('attributes on /me: the reserved namespaces are the app\'s', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const { token, me } = await userWithProfile(server);
  const replaced = await server.request('PUT', me, { token, body: { attributes: { 'prefs:size': ['L'] } } });
  t.equal(replaced.status, 200);
  t.same(replaced.body.attributes, { 'svc:app_variants': ['web'], 'prefs:size': ['L'] }, 'svc: keys survive a replace');
  for (const key of ['svc:app_variants', 'svc:other', 'system:x', 'SVC:app_variants', 'System:x']) {
    const res = await server.request('PATCH', me, { token, body: { attributes: { [key]: ['mine'] } } });
    t.equal(res.status, 400, key);
    t.equal(res.body.code, 'E_USER_UPDATE_FAILED');
    t.ok(res.body.field_errors[`attributes.${key}`], key);
  }
  const removal = await server.request('PATCH', me, { token, body: { attributes: { 'svc:app_variants': null } } });
  t.equal(removal.status, 400, 'removing a reserved key is writing it');
});

t.test('field endpoints on /me honour the schema rights', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const { userId, token } = await userWithProfile(server);
  const field = (name: string) => `/me/applications/${server.app.id}/data/fields/${name}`;
  t.same((await server.request('GET', field('nickname'), { token })).body, { value: 'n' });
  t.same((await server.request('GET', field('user_id'), { token })).body, { value: userId });
  const hidden = await server.request('GET', field('internal_score'), { token });
  t.equal(hidden.status, 403);
  t.equal(hidden.body.code, 'E_FORBIDDEN');
  const unknown = await server.request('GET', field('crm_note'), { token });
  t.equal(unknown.status, 404, 'fields outside the schema are the app\'s');
  t.equal(unknown.body.code, 'E_FIELD_NOT_FOUND');
  const absent = await server.request('GET', field('age'), { token });
  t.equal(absent.status, 404);
  t.equal(absent.body.code, 'E_FIELD_NOT_FOUND');

  const put = await server.request('PUT', field('age'), { token, body: { value: 41 } });
  t.equal(put.status, 200, put.text);
  t.equal(put.body.data.age, 41, 'answers the whole profile');
  const form = new FormData();
  form.set('value', '42');
  const multipart = await server.request('PUT', field('age'), { token, rawBody: form });
  t.equal(multipart.status, 200, multipart.text);
  t.equal(multipart.body.data.age, 42, 'multipart text is read by the field type');
  for (const text of ['0x10', '1e', ' 7', 'Infinity']) {
    const notJsonNumber = new FormData();
    notJsonNumber.set('value', text);
    const res = await server.request('PUT', field('age'), { token, rawBody: notJsonNumber });
    t.equal(res.status, 400, `${JSON.stringify(text)} is no number`);
  }
  const wrongType = await server.request('PUT', field('age'), { token, body: { value: 'old' } });
  t.equal(wrongType.status, 400);
  t.ok(wrongType.body.field_errors.age);
  const notWritable = await server.request('PUT', field('tier'), { token, body: { value: 'platinum' } });
  t.equal(notWritable.status, 400);
  t.ok(notWritable.body.field_errors.tier);
  const userId2 = await server.request('PUT', field('user_id'), { token, body: { value: 'other' } });
  t.equal(userId2.status, 400);
  const outside = await server.request('PUT', field('nope'), { token, body: { value: 1 } });
  t.equal(outside.status, 400, 'a field outside the schema is not the user\'s to write');
  t.equal(outside.body.code, 'E_USER_UPDATE_FAILED');
  const badBody = await server.request('PUT', field('age'), { token, body: { age: 3 } });
  t.equal(badBody.status, 400);
  t.ok(badBody.body.field_errors.value);
});

t.test('PUT /me/meta stamps the passkey prompt', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const { token } = await userWithProfile(server);
  const res = await server.request('PUT', '/me/meta', { token, body: { last_passkey_registration_prompt: '2026-03-04T05:06:07Z' } });
  t.equal(res.status, 200, res.text);
  t.equal(res.body.meta.last_passkey_registration_prompt, '2026-03-04T05:06:07.000Z');
  const bad = await server.request('PUT', '/me/meta', { token, body: { last_passkey_registration_prompt: 'yesterday' } });
  t.equal(bad.status, 400);
  t.equal(bad.body.code, 'E_VALIDATION');
  t.equal((await server.request('PUT', '/me/meta', { token, body: { other: 1 } })).status, 400);

  // An offset of hours alone was taken by the format check and then failed to parse (a 500); a day
  // that does not exist rolled over into the next month; a year past 9999 was stored as +010000.
  for (const text of ['2026-03-04T05:06:07+05', '2026-02-30T00:00:00Z', '2026-03-04T24:00:00Z', '9999-12-31T23:59:59-23:59']) {
    const refused = await server.request('PUT', '/me/meta', { token, body: { last_passkey_registration_prompt: text } });
    t.equal(refused.status, 400, `${text}: ${refused.text}`);
    t.ok(refused.body.field_errors?.last_passkey_registration_prompt);
  }
  const offset = await server.request('PUT', '/me/meta', { token, body: { last_passkey_registration_prompt: '2026-03-04T05:06:07+05:30' } });
  t.equal(offset.body.meta.last_passkey_registration_prompt, '2026-03-03T23:36:07.000Z', 'an offset is stored in UTC');
  t.equal((await server.request('GET', `/me/applications/${server.app.id}/data`, { token })).body.meta.last_passkey_registration_prompt, '2026-03-03T23:36:07.000Z', 'refused stamps changed nothing');
});

t.test('/me calls stamp meta.last_active at most once a minute', async (t) => {
  const clock = manualClock();
  const server = await startServerWithSchema(t, schema, { clock });
  const { userId, token, me } = await userWithProfile(server);
  const lastActive = () => server.deps.users.require(server.app.id, userId).context.meta.last_active;
  t.equal(lastActive(), undefined);
  const first = await server.request('GET', me, { token });
  t.equal(first.body.meta.last_active, new Date(clock.now()).toISOString(), 'the answer already shows the stamp');
  const stamped = lastActive();
  clock.advance(59_000);
  await server.request('GET', me, { token });
  t.equal(lastActive(), stamped, 'not again within the minute');
  clock.advance(1_000);
  await server.request('GET', me, { token });
  t.equal(lastActive(), new Date(clock.now()).toISOString(), 'a minute later it moves');
  t.equal(server.deps.users.require(server.app.id, userId).context.meta.modified, first.body.meta.modified, 'activity is not a modification');
});

t.test('a user deleted and made again under its ID is stamped on its first /me call, though the one before was stamped within the minute', async (t) => {
  const clock = manualClock();
  const server = await startServerWithSchema(t, schema, { clock });
  const { userId, token, me } = await userWithProfile(server);
  t.ok((await server.request('GET', me, { token })).body.meta.last_active, 'the first user is stamped');
  clock.advance(1_000);
  t.equal((await server.request('DELETE', `/applications/${server.app.id}/users/${userId}/data`, { app: server.app })).status, 204);
  const again = await tokenFor(server, { user_id: userId });
  const answer = await server.request('GET', me, { token: again.token });
  t.equal(answer.status, 200);
  t.equal(answer.body.meta.last_active, new Date(clock.now()).toISOString(), 'the new user is stamped at its first call');
});

t.test('a /me write refused by its rate limit (429) does not stamp meta.last_active', async (t) => {
  const clock = manualClock();
  // One write per 100 s: a minute later the bucket is still empty, though the stamp is due again.
  const server = await startServerWithSchema(t, schema, { clock, env: { SVC_RATE_LIMIT_USER_WRITES: '0.01/1' } });
  const { userId, token, me } = await userWithProfile(server);
  const lastActive = () => server.deps.users.require(server.app.id, userId).context.meta.last_active;
  t.equal((await server.request('PATCH', me, { token, body: { data: { nickname: 'a' } } })).status, 200, 'the one write the bucket holds');
  const stamped = lastActive();
  t.equal(stamped, new Date(clock.now()).toISOString());
  clock.advance(60_000);
  const refused = await server.request('PATCH', me, { token, body: { data: { nickname: 'b' } } });
  t.equal(refused.status, 429);
  t.equal(lastActive(), stamped, 'the refused write left the stamp as it was');
  await server.request('GET', me, { token });
  t.equal(lastActive(), new Date(clock.now()).toISOString(), 'a read, which no limit refuses, stamps it');
});

t.test('every /me feature stamps meta.last_active alike: profile, field, meta, groups, members, invites', async (t) => {
  const clock = manualClock();
  const server = await startServerWithSchema(t, schema, { clock });
  const { userId, token, me } = await userWithProfile(server);
  const group = (await server.request('POST', '/me/groups', { token, body: { name: 'g' } })).body.group.id;
  const calls: [string, string, unknown?][] = [
    ['GET', me],
    ['HEAD', me],
    ['GET', `${me}/fields/nickname`],
    ['GET', `${me}/fields/no_such_field`],
    ['PATCH', me, { data: { nickname: 'x' } }],
    ['PUT', `${me}/fields/nickname`, { value: 'y' }],
    ['PUT', '/me/meta', { last_passkey_registration_prompt: '2026-01-01T00:00:00Z' }],
    ['GET', '/me/groups'],
    ['GET', `/me/groups/${group}`],
    ['GET', `/me/groups/${group}/members`],
    ['GET', `/me/groups/${group}/invites`],
  ];
  for (const [method, path, body] of calls) {
    clock.advance(60_000);
    await server.request(method, path, { token, body });
    t.equal(server.deps.users.require(server.app.id, userId).context.meta.last_active, new Date(clock.now()).toISOString(), `${method} ${path}`);
  }
});

t.test('a disabled user\'s token is refused with E_USER_DISABLED; a token of another app is 403', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const { userId, token, me } = await userWithProfile(server);
  await server.request('POST', `/applications/${server.app.id}/users/${userId}/state`, { app: server.app, body: { state: 'disabled' } });
  const refused = await server.request('GET', me, { token });
  t.equal(refused.status, 401);
  t.equal(refused.body.code, 'E_USER_DISABLED');
  await server.request('POST', `/applications/${server.app.id}/users/${userId}/state`, { app: server.app, body: { state: 'enabled' } });
  t.equal((await server.request('GET', me, { token })).status, 200, 'enabled again, the token works');

  const other = await server.deps.apps.create('other');
  const wrongApp = await server.request('GET', `/me/applications/${other.id}/data`, { token });
  t.equal(wrongApp.status, 403);
});

t.test('a schema change shows in /me bodies at once, even two changes within one millisecond', async (t) => {
  const clock = manualClock();
  const server = await startServerWithSchema(t, schema, { clock });
  const { token, me } = await userWithProfile(server);
  const withTier = (user_readable: boolean) => ({ ...schema, fields: { ...schema.fields, tier: { type: 'string' as const, user_readable } } });
  const first = await server.deps.apps.update(server.app.id, { schema: withTier(true) });
  t.equal((await server.request('PATCH', me, { token, body: { data: { nickname: 'm' } } })).body.data.tier, 'gold');
  // The clock has not moved: the stamp of the body just rendered must still differ from the next schema's.
  const second = await server.deps.apps.update(server.app.id, { schema: withTier(false) });
  t.ok(second.updated_at > first.updated_at, `${second.updated_at} is later than ${first.updated_at}`);
  t.notOk('tier' in (await server.request('GET', me, { token })).body.data, 'the field the user may no longer read is gone');
});

t.test('a field the user may write but not read keeps its value when a PUT leaves it out', async (t) => {
  const withPin = (required: boolean) => ({ fields: { ...schema.fields, pin: { type: 'string' as const, user_writable: true, required } }, allow_unknown_fields: true });
  const server = await startServerWithSchema(t, withPin(false));
  const { userId, token, me } = await userWithProfile(server);
  await server.deps.apps.update(server.app.id, { schema: withPin(true) });
  t.equal((await server.request('PATCH', me, { token, body: { data: { pin: '1234' } } })).status, 200, 'the user sets it');
  const shown = (await server.request('GET', me, { token })).body;
  t.notOk('pin' in shown.data, 'but is never shown it');
  const echoed = await server.request('PUT', me, { token, body: { data: shown.data } });
  t.equal(echoed.status, 200, `its profile sent back as read passes: ${echoed.text}`);
  const platform = (userId: string) => server.request('GET', `/applications/${server.app.id}/users/${userId}/data`, { app: server.app });
  t.equal((await platform(userId)).body.data.pin, '1234', 'and keeps the value it could not see');
  const removal = await server.request('PATCH', me, { token, body: { data: { pin: null } } });
  t.same(removal.body.field_errors, { pin: ['is required'] }, 'a required one can be changed, not removed');
});

t.test("verified_data on /me shows an address only where the app lets the user read that field, as data does", async (t) => {
  // email listed without rights: the app keeps it from its users; phone_number keeps its implicit ones.
  const server = await startServerWithSchema(t, { fields: { email: { type: 'string' } } });
  const signedIn = await signInByLink(server, 'ada@example.com');
  const userId = signedIn.app_user_id;
  const platform = `/applications/${server.app.id}/users/${userId}/data`;
  t.equal((await server.request('PATCH', platform, { app: server.app, body: { data: { phone_number: '+1 555 0100' } } })).status, 200);
  const byPhone = await server.request('POST', '/hub/auth/magic', {
    app: server.app,
    body: { verification_type: 'phone', user_id: userId, data: { phone_number: '+1 555 0100' } },
  });
  t.equal((await server.request('GET', linkPath(byPhone.body.link))).status, 200);

  const me = (await server.request('GET', `/me/applications/${server.app.id}/data`, { token: signedIn.access_token })).body;
  t.notOk('email' in me.data, 'data hides the email');
  t.same(me.verified_data, { phone_number: '+1 555 0100' }, 'and so does verified_data; the readable phone shows');
  const seen = (await server.request('GET', platform, { app: server.app })).body.verified_data;
  t.same(seen, { email: 'ada@example.com', phone_number: '+1 555 0100' }, 'the platform sees both');
});

t.test('a PUT that leaves out a required field the user may write but not read does not tell whether it is set', async (t) => {
  const withPin = (required: boolean) => ({ fields: { ...schema.fields, pin: { type: 'string' as const, user_writable: true, required } }, allow_unknown_fields: true });
  const server = await startServerWithSchema(t, withPin(false));
  const { userId, token, me } = await userWithProfile(server);
  const other = await tokenFor(server, { email: 'other@example.com' });
  await server.deps.apps.update(server.app.id, { schema: withPin(true) });
  t.equal((await server.request('PATCH', `/applications/${server.app.id}/users/${userId}/data`, { app: server.app, body: { data: { pin: '1234' } } })).status, 200);
  const put = (token: string) => server.request('PUT', me, { token, body: { data: { nickname: 'n' } } });
  const [set, unset] = [await put(token), await put(other.token)];
  t.equal(set.status, 200, 'a pin set');
  t.equal(unset.status, set.status, `a pin never set answers the same: ${unset.text}`);
  const removal = await server.request('PATCH', me, { token: other.token, body: { data: { pin: null } } });
  t.same(removal.body.field_errors, { pin: ['is required'] }, 'named, it is held to the rule by the value given alone');
});

t.test("renaming an app leaves its users' prepared /me bodies current; changing its schema does not", async (t) => {
  const server = await startServerWithSchema(t, { fields: { nickname: { type: 'string', user_readable: true } } });
  const signedIn = await signInByLink(server, 'ada@example.com');
  const userId = signedIn.app_user_id;
  const { apps, profiles } = server.deps;
  const platform = `/applications/${server.app.id}/users/${userId}/data`;
  t.equal((await server.request('PATCH', platform, { app: server.app, body: { data: { nickname: 'ada' } } })).status, 200);
  const stamped = () => meView(profiles.records.getBinary([server.app.id, userId])!).schemaStamp;
  const current = () => stamped() === schemaStampOf(apps.require(server.app.id));
  t.ok(current(), 'rendered under the schema it has');
  await apps.update(server.app.id, { name: 'renamed' });
  t.ok(current(), 'a rename: still current, so no /me read renders it again');
  const { schema } = apps.require(server.app.id);
  await apps.update(server.app.id, { name: 'renamed again', schema });
  t.ok(current(), 'the same schema sent back: still current');
  await apps.update(server.app.id, { schema: { ...schema, fields: { nickname: { type: 'string' } } } });
  t.notOk(current(), 'a schema change: stale, rendered again as it is read');
  const me = (await server.request('GET', `/me/applications/${server.app.id}/data`, { token: signedIn.access_token })).body;
  t.notOk('nickname' in me.data, 'and /me shows the field no more');
});

t.test('a /me write naming a write-only field moves meta.modified whatever the stored value, so it tells nothing of it', async (t) => {
  const clock = manualClock();
  const server = await startServerWithSchema(t, { ...schema, fields: { ...schema.fields, pin_hint: { type: 'string' as const, user_writable: true } } }, { clock });
  const { userId, token } = await tokenFor(server, { user_id: 'wo-1' });
  await server.request('PUT', `/applications/${server.app.id}/users/${userId}/data`, { app: server.app, body: { data: { pin_hint: 'blue' } } });
  const me = `/me/applications/${server.app.id}/data`;
  const probes: Array<[string, string, object]> = [
    ['PATCH', me, { data: { pin_hint: 'blue' } }],
    ['PUT', `${me}/fields/pin_hint`, { value: 'blue' }],
    ['PATCH', me, { data: { pin_hint: null } }],
    ['PATCH', me, { data: { pin_hint: null } }],
  ];
  for (const [method, path, body] of probes) {
    clock.advance(1_000);
    const res = await server.request(method, path, { token, body });
    t.equal(res.status, 200, res.text);
    t.equal(res.body.meta.modified, new Date(clock.now()).toISOString(), `${method} ${JSON.stringify(body)}: modified moves, as it would for another value`);
  }
  clock.advance(1_000);
  const readable = await server.request('PATCH', me, { token, body: { data: { nickname: null } } });
  t.not(readable.body.meta.modified, new Date(clock.now()).toISOString(), 'a write that changes nothing the user can read is still no modification');
});

t.test('a /me call whose activity stamp waited while its user was deleted and made again answers 401, not the new user', async (t) => {
  const { holdLocks, queueOn } = await import('../../helpers/locks.js');
  const { userLock } = await import('../../../src/features/users/directory.js');
  const clock = manualClock();
  const server = await startServerWithSchema(t, schema, { clock });
  const { userId, token, me } = await userWithProfile(server);
  t.equal((await server.request('GET', me, { token })).status, 200);
  clock.advance(61_000);
  const lock = userLock(server.app.id, userId);
  const path = `/applications/${server.app.id}/users/${userId}/data`;
  const release = await holdLocks(server, [lock]);
  const removed = await queueOn(server, lock, () => server.request('DELETE', path, { app: server.app }));
  const remade = await queueOn(server, lock, () => server.request('PUT', path, { app: server.app, body: { data: { nickname: 'someone else' } } }));
  // Its token still holds for the user as committed; only the stamp waits, behind the two.
  const read = await queueOn(server, lock, () => server.request('GET', me, { token }));
  release();
  t.equal((await removed.answer).status, 204);
  t.equal((await remade.answer).status, 200);
  const answer = await read.answer;
  t.equal(answer.status, 401, answer.text);
  t.equal(answer.body.code, 'E_TOKEN_REVOKED');
  t.notOk(answer.text.includes('someone else'), 'nothing of the new user');
  t.equal(server.deps.users.require(server.app.id, userId).context.meta.last_active, undefined, 'nor is the new user stamped active by it');
});
