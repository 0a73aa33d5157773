import t, { type Test } from 'tap';
import { startServer, type TestServer } from '../../helpers/server.js';
import { startServerWithSchema } from '../../helpers/schema.js';
import { tokenFor } from '../../helpers/tokens.js';
import { manualClock } from '../../../src/lib/clock.js';
import { userLock } from '../../../src/features/users/directory.js';

const schema: Parameters<typeof startServerWithSchema>[1] = {
  fields: {
    nickname: { type: 'string', user_readable: true, user_writable: true },
    age: { type: 'number', user_readable: true, user_writable: true },
    newsletter: { type: 'boolean', user_readable: true },
    settings: { type: 'object' },
    plan: { type: 'string', required: true },
    avatar: { type: 'image', user_readable: true, user_writable: true },
  },
  allow_unknown_fields: false,
};

const serverWithSchema = (t: Parameters<typeof startServer>[0], fields = schema) => startServerWithSchema(t, fields);

t.test('PUT creates a user under an app-chosen ID, replaces data, and GET answers it', async (t) => {
  const clock = manualClock();
  const server = await startServerWithSchema(t, schema, { clock });
  const path = `/applications/${server.app.id}/users/ext-42@crm/data`;
  const created = await server.request('PUT', path, {
    app: server.app,
    body: { data: { email: 'Ada@Example.com', nickname: 'ada', plan: 'pro', age: 36 }, attributes: { 'crm:tags': ['vip'] } },
  });
  t.equal(created.status, 200, created.text);
  t.equal(created.body.svc_user, 'ext-42@crm');
  t.equal(created.body.state, 'enabled');
  t.equal(created.body.auth_level, 'unverified');
  t.same(created.body.data, { email: 'Ada@Example.com', nickname: 'ada', plan: 'pro', age: 36, user_id: 'ext-42@crm' });
  t.same(created.body.attributes, { 'crm:tags': ['vip'] });
  t.same(created.body.verified_data, {});
  t.same(created.body.groups, []);
  t.same(created.body.connection_map, {});
  t.ok(created.body.meta.created && created.body.meta.modified);

  clock.advance(1000);
  const noop = await server.request('PUT', path, { app: server.app, body: { data: created.body.data } });
  t.same(noop.body, created.body, 'a write that changes nothing changes nothing, not even meta.modified');

  const replaced = await server.request('PUT', path, { app: server.app, body: { data: { plan: 'free' } } });
  t.equal(replaced.status, 200);
  t.same(replaced.body.data, { plan: 'free', user_id: 'ext-42@crm' }, 'PUT replaces data as a whole');
  t.same(replaced.body.attributes, { 'crm:tags': ['vip'] }, 'attributes are kept when not given');
  t.same(server.deps.users.findByAddress(server.app.id, 'email', 'ada@example.com'), [], 'the dropped email is unindexed');

  const got = await server.request('GET', path, { app: server.app });
  t.equal(got.status, 200);
  t.equal(got.headers.get('content-type'), 'application/json');
  t.same(got.body, replaced.body);

  const projected = await server.request('GET', `${path}?fields=plan,missing`, { app: server.app });
  t.same(projected.body.data, { user_id: 'ext-42@crm', plan: 'free' });
  t.equal(projected.body.svc_user, 'ext-42@crm');
  t.equal((await server.request('GET', `${path}?fields=`, { app: server.app })).status, 400);
  t.equal((await server.request('GET', `${path}?nope=1`, { app: server.app })).status, 400);
});

t.test('__uuid__ and __default__ generate IDs; bad IDs are refused', async (t) => {
  const server = await serverWithSchema(t);
  const base = `/applications/${server.app.id}/users`;
  const ids = new Set<string>();
  for (const word of ['__uuid__', '__default__']) {
    const res = await server.request('PUT', `${base}/${word}/data`, { app: server.app, body: { data: { plan: 'x' } } });
    t.equal(res.status, 200);
    t.match(res.body.svc_user, /^user_[0-9A-Z]{26}$/);
    t.equal(res.body.data.user_id, res.body.svc_user);
    ids.add(res.body.svc_user);
  }
  t.equal(ids.size, 2);
  t.equal(server.deps.users.count(server.app.id), 2);
  const tooLong = await server.request('PUT', `${base}/${'a'.repeat(129)}/data`, { app: server.app, body: { data: { plan: 'x' } } });
  t.equal(tooLong.status, 400);
  t.equal(tooLong.body.code, 'E_VALIDATION');
  const badChars = await server.request('PUT', `${base}/a%20b/data`, { app: server.app, body: { data: { plan: 'x' } } });
  t.equal(badChars.status, 400);
  t.equal(server.deps.users.count(server.app.id), 2, 'nothing was created');

  const longest = `Az09_.:@|+-${'x'.repeat(117)}`;
  for (const id of ['x', longest]) {
    const res = await server.request('PUT', `${base}/${id}/data`, { app: server.app, body: { data: { plan: 'x' } } });
    t.equal(res.status, 200, `an app-chosen ID of ${id.length} characters of [A-Za-z0-9_.:@|+-] (ADDENDUM §1)`);
    t.equal(res.body.svc_user, id);
    t.equal((await server.request('GET', `${base}/${encodeURIComponent(id)}/data`, { app: server.app })).body.svc_user, id, 'read back by it, percent-encoded');
  }
});

t.test('PATCH merges; null removes; user_id is immutable', async (t) => {
  const server = await serverWithSchema(t);
  const path = `/applications/${server.app.id}/users/u1/data`;
  await server.request('PUT', path, { app: server.app, body: { data: { plan: 'pro', nickname: 'a', age: 1 }, attributes: { 'a:x': ['1'], 'a:y': ['2'] } } });
  const merged = await server.request('PATCH', path, {
    app: server.app,
    body: { data: { nickname: 'b', age: null }, attributes: { 'a:y': null, 'a:z': ['3'] } },
  });
  t.equal(merged.status, 200, merged.text);
  t.same(merged.body.data, { plan: 'pro', nickname: 'b', user_id: 'u1' });
  t.same(merged.body.attributes, { 'a:x': ['1'], 'a:z': ['3'] });

  const replacedAttrs = await server.request('PUT', path, { app: server.app, body: { data: { plan: 'pro' }, attributes: { 'b:only': [] } } });
  t.same(replacedAttrs.body.attributes, { 'b:only': [] }, 'attributes, when given, replace');

  const sameId = await server.request('PATCH', path, { app: server.app, body: { data: { user_id: 'u1' } } });
  t.equal(sameId.status, 200);
  const otherId = await server.request('PATCH', path, { app: server.app, body: { data: { user_id: 'u2' } } });
  t.equal(otherId.status, 400);
  t.equal(otherId.body.code, 'E_USER_UPDATE_FAILED');
  t.ok(otherId.body.field_errors.user_id);
  const sameIdField = await server.request('PUT', `${path}/fields/user_id`, { app: server.app, body: { value: 'u1' } });
  t.equal(sameIdField.status, 200, 'a field PUT of user_id with its own value passes, as the PATCH does');
  t.same(sameIdField.body, sameId.body, 'and changes nothing');
  for (const value of ['u2', null]) {
    const res = await server.request('PUT', `${path}/fields/user_id`, { app: server.app, body: { value } });
    t.equal(res.status, 400, `a field PUT of user_id ${value} is refused as the PATCH is`);
    t.same(res.body.field_errors, { user_id: ['user_id cannot be changed'] });
  }

  const patchMissing = await server.request('PATCH', `/applications/${server.app.id}/users/nobody/data`, {
    app: server.app,
    body: { data: { plan: 'x' } },
  });
  t.equal(patchMissing.status, 200, 'PATCH upserts like PUT');

  for (const [method, body] of [
    ['PUT', {}],
    ['PUT', { attributes: { 'a:b': ['c'] } }],
    ['PUT', undefined],
    ['PATCH', { data: { nickname: 'n' } }],
  ] as const) {
    const created = await server.request(method, `/applications/${server.app.id}/users/incomplete/data`, { app: server.app, body });
    t.equal(created.status, 400, `${method} ${JSON.stringify(body)}: a profile it creates has its required fields`);
    t.same(created.body.field_errors, { plan: ['is required'] });
  }
  t.equal((await server.request('GET', `/applications/${server.app.id}/users/incomplete/data`, { app: server.app })).status, 404, 'none was created');
  const wrongType = await server.request('PUT', `/applications/${server.app.id}/users/nobody/data`, { app: server.app, body: { data: { plan: 5 } } });
  t.same(wrongType.body.field_errors, { plan: ['must be a string'] }, 'a refused value is not also "missing"');

  const users = `/applications/${server.app.id}/users`;
  t.equal((await server.request('PUT', `${users}/whole/data`, { app: server.app, body: { data: { plan: 'pro' } } })).status, 200);
  const emptied: Array<[string, string, unknown]> = [
    ['PUT', `${users}/whole/data`, { data: { plan: '' } }],
    ['PATCH', `${users}/whole/data`, { data: { plan: '' } }],
    ['PUT', `${users}/whole/data/fields/plan`, { value: '' }],
  ];
  for (const [method, path, body] of emptied) {
    const res = await server.request(method, path, { app: server.app, body });
    t.equal(res.status, 400, `${method} ${path.slice(users.length)} with "": an existing profile keeps its required field`);
    t.same(res.body.field_errors, { plan: ['is required'] });
  }
  const kept = await server.request('GET', `${users}/whole/data`, { app: server.app });
  t.equal(kept.body.data.plan, 'pro', 'nothing changed');
});

t.test('a multipart profile write holds at most 256 parts: past them it is refused before any part is read', async (t) => {
  const server = await startServer(t);
  const path = `/applications/${server.app.id}/users/parts/data`;
  const parts = (count: number) => Array.from({ length: count }, (_, i) => `--XX\r\nContent-Disposition: form-data; name="p${i}"\r\n\r\n\r\n`).join('');
  const put = (count: number) =>
    server.request('PUT', path, { app: server.app, rawBody: `${parts(count)}--XX--\r\n`, headers: { 'content-type': 'multipart/form-data; boundary=XX' } });
  const most = await put(256);
  t.equal(most.status, 400);
  t.equal(most.body.messages.at(-1), 'and 156 more fields refused', '256 parts are read (each an unknown part; 100 named)');
  const over = await put(257);
  t.equal(over.status, 400);
  t.same([over.body.code, over.body.field_errors], ['E_VALIDATION', { body: ['a body holds at most 256 parts'] }], '257 are not');
  t.equal((await server.request('GET', path, { app: server.app })).status, 404, 'nothing made');
});

t.test('validation failures answer E_USER_UPDATE_FAILED with field_errors and change nothing', async (t) => {
  const server = await serverWithSchema(t);
  const path = `/applications/${server.app.id}/users/v1/data`;
  await server.request('PUT', path, { app: server.app, body: { data: { plan: 'pro' } } });
  const before = await server.request('GET', path, { app: server.app });

  const bad = await server.request('PUT', path, {
    app: server.app,
    body: {
      data: { nickname: 5, age: 'old', newsletter: 'yes', settings: [1], unknown_thing: 1, email: 'not-an-email', avatar: { x: 1 } },
      attributes: { nonamespace: ['x'], 'a:list': 'x', 'system:flag': ['1'] },
    },
  });
  t.equal(bad.status, 400);
  t.equal(bad.body.code, 'E_USER_UPDATE_FAILED');
  t.equal(bad.body.statusCode, 400);
  t.equal(bad.body.error, 'Bad Request');
  const fe = bad.body.field_errors;
  for (const field of ['nickname', 'age', 'newsletter', 'settings', 'unknown_thing', 'email', 'avatar', 'plan']) {
    t.ok(fe[field], `field error for ${field}`);
  }
  t.match(fe.plan, ['is required']);
  t.ok(fe['attributes.nonamespace'] && fe['attributes.a:list'] && fe['attributes.system:flag']);
  t.ok(bad.body.messages.length >= 10);

  for (const email of ['ada\u0000@example.com', 'ada@exa\u0007mple.com', 'ada\u007f@example.com', 'ada@example.com\u0085']) {
    const control = await server.request('PATCH', path, { app: server.app, body: { data: { email } } });
    t.equal(control.status, 400, `${JSON.stringify(email)}: a control character is no part of an address`);
    t.ok(control.body.field_errors.email);
  }

  const tooLong = await server.request('PATCH', path, { app: server.app, body: { data: { nickname: 'x'.repeat(64 * 1024 + 1) } } });
  t.equal(tooLong.status, 400);
  t.ok(tooLong.body.field_errors.nickname);
  const exactly = await server.request('PATCH', path, { app: server.app, body: { data: { nickname: 'x'.repeat(64 * 1024) } } });
  t.equal(exactly.status, 200, 'a 64 KiB string fits');

  const tooManyKeys = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`n:k${i}`, ['v']]));
  const keys = await server.request('PATCH', path, { app: server.app, body: { attributes: tooManyKeys } });
  t.equal(keys.status, 400);
  t.ok(keys.body.field_errors.attributes);
  const tooManyValues = await server.request('PATCH', path, {
    app: server.app,
    body: { attributes: { 'n:k': Array.from({ length: 101 }, () => 'v') } },
  });
  t.equal(tooManyValues.status, 400);
  t.ok(tooManyValues.body.field_errors['attributes.n:k']);
  const limits = await server.request('PATCH', path, {
    app: server.app,
    body: { attributes: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`n:k${i}`, Array.from({ length: 100 }, () => 'v')])) },
  });
  t.equal(limits.status, 200, '100 keys of 100 values fit');

  const shape = await server.request('PUT', path, { app: server.app, body: { data: [], extra: 1 } });
  t.equal(shape.status, 400);
  t.ok(shape.body.field_errors.data && shape.body.field_errors.extra);
  const notJson = await server.request('PUT', path, { app: server.app, rawBody: '{', headers: { 'content-type': 'application/json' } });
  t.equal(notJson.body.code, 'E_BAD_JSON');

  await server.request('PATCH', path, { app: server.app, body: { data: { nickname: null }, attributes: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`n:k${i}`, null])) } });
  const after = await server.request('GET', path, { app: server.app });
  t.same(after.body.data, before.body.data, 'refused writes changed nothing');
});

t.test('reserved namespaces: <brand>: only with app credentials, system: by nobody', async (t) => {
  const server = await serverWithSchema(t, { fields: {} });
  const path = `/applications/${server.app.id}/users/r1/data`;
  const app = await server.request('PUT', path, { app: server.app, body: { attributes: { 'svc:app_variants': ['web'] } } });
  t.equal(app.status, 200);
  t.same(app.body.attributes, { 'svc:app_variants': ['web'] });
  const system = await server.request('PATCH', path, { app: server.app, body: { attributes: { 'system:x': ['1'] } } });
  t.equal(system.status, 400);
  t.ok(system.body.field_errors['attributes.system:x']);
});

t.test('update_integrations is accepted as a boolean', async (t) => {
  const server = await serverWithSchema(t, { fields: {} });
  const path = `/applications/${server.app.id}/users/i1/data`;
  t.equal((await server.request('PUT', `${path}?update_integrations=true`, { app: server.app, body: { data: {} } })).status, 200);
  const bad = await server.request('PUT', `${path}?update_integrations=maybe`, { app: server.app, body: { data: {} } });
  t.equal(bad.status, 400);
  t.equal(bad.body.code, 'E_VALIDATION');
  t.ok(bad.body.field_errors.update_integrations);
});

t.test('DELETE removes the user, its index entries and count; unknown users are 404', async (t) => {
  const server = await serverWithSchema(t, { fields: {} });
  const path = `/applications/${server.app.id}/users/d1/data`;
  await server.request('PUT', path, { app: server.app, body: { data: { email: 'd@example.com' } } });
  t.equal(server.deps.users.count(server.app.id), 1);
  const deleted = await server.request('DELETE', path, { app: server.app });
  t.equal(deleted.status, 204);
  t.equal(deleted.text, '');
  t.equal(server.deps.users.count(server.app.id), 0);
  t.same(server.deps.users.findByAddress(server.app.id, 'email', 'd@example.com'), []);
  const gone = await server.request('GET', path, { app: server.app });
  t.equal(gone.status, 404);
  t.equal(gone.body.code, 'E_USER_NOT_FOUND');
  t.equal((await server.request('DELETE', path, { app: server.app })).status, 404);
});

t.test('POST …/state disables and enables; same state is a no-op; bad bodies are 400', async (t) => {
  const server = await serverWithSchema(t, { fields: {} });
  const base = `/applications/${server.app.id}/users/s1`;
  await server.request('PUT', `${base}/data`, { app: server.app, body: { data: {} } });
  const disabled = await server.request('POST', `${base}/state`, { app: server.app, body: { state: 'disabled' } });
  t.equal(disabled.status, 200);
  t.equal(disabled.body.state, 'disabled');
  t.equal((await server.request('GET', `${base}/data`, { app: server.app })).body.state, 'disabled');
  const again = await server.request('POST', `${base}/state`, { app: server.app, body: { state: 'disabled' } });
  t.equal(again.status, 200);
  t.equal(again.body.meta.modified, disabled.body.meta.modified, 'asking for the current state changes nothing');
  const enabled = await server.request('POST', `${base}/state`, { app: server.app, body: { state: 'enabled' } });
  t.equal(enabled.body.state, 'enabled');
  const bad = await server.request('POST', `${base}/state`, { app: server.app, body: { state: 'frozen' } });
  t.equal(bad.status, 400);
  t.equal(bad.body.code, 'E_VALIDATION');
  t.ok(bad.body.field_errors.state);
  const noBody = await server.request('POST', `${base}/state`, { app: server.app });
  t.equal(noBody.status, 400, 'a body is required');
  t.same(noBody.body.field_errors, { state: ['is required'] });
  const missing = await server.request('POST', `/applications/${server.app.id}/users/none/state`, { app: server.app, body: { state: 'disabled' } });
  t.equal(missing.status, 404);
});

t.test('__sample__ answers an example profile of the schema and stores nothing', async (t) => {
  const server = await serverWithSchema(t);
  const res = await server.request('GET', `/applications/${server.app.id}/users/__sample__/data`, { app: server.app });
  t.equal(res.status, 200);
  t.match(res.body.svc_user, /^user_/);
  t.equal(res.body.data.user_id, res.body.svc_user);
  t.equal(typeof res.body.data.nickname, 'string');
  t.equal(typeof res.body.data.age, 'number');
  t.equal(typeof res.body.data.newsletter, 'boolean');
  t.equal(typeof res.body.data.settings, 'object');
  t.match(res.body.data.avatar, { content_type: /^image\// });
  t.match(res.body.data, { email: /@/, first_name: String, last_name: String, phone_number: String });
  t.same(res.body.verified_data, { email: res.body.data.email, phone_number: res.body.data.phone_number }, 'both addresses verified, as SPEC lists them');
  t.same(Object.keys(res.body).sort(), ['attributes', 'auth_level', 'connection_map', 'data', 'groups', 'meta', 'state', 'svc_user', 'verified_data']);
  t.equal(server.deps.users.count(server.app.id), 0);
  t.same(Object.keys(res.body.meta).sort(), [
    'created', 'first_sign_in', 'first_sign_in_method', 'last_active', 'last_passkey_registration_prompt',
    'last_sign_in', 'last_sign_in_method', 'modified',
  ], 'every meta stamp');
  const base = `/applications/${server.app.id}/users/__sample__/data`;
  const projected = await server.request('GET', `${base}?fields=nickname`, { app: server.app });
  t.same(Object.keys(projected.body.data).sort(), ['nickname', 'user_id'], 'fields projects the sample as it does a profile');
  t.equal((await server.request('GET', `${base}?bogus=1`, { app: server.app })).status, 400, 'unknown parameters are refused');
  // An upsert cannot create it; routes about an existing user answer it as unknown (path-user-ids.test.ts).
  for (const method of ['PUT', 'PATCH']) {
    const res = await server.request(method, base, { app: server.app, body: { data: {} } });
    t.equal(res.status, 400, `${method} ${base}: __sample__ is not a user ID`);
    t.ok(res.body.field_errors.user);
  }
});

t.test('writes refuse query parameters they do not take, and change nothing', async (t) => {
  const server = await serverWithSchema(t);
  const path = `/applications/${server.app.id}/users/q1/data`;
  t.equal((await server.request('PUT', path, { app: server.app, body: { data: { plan: 'pro' } } })).status, 200);
  const remove = await server.request('DELETE', `${path}?x=1`, { app: server.app });
  t.equal(remove.status, 400);
  t.same(remove.body.field_errors, { x: ['is not a known field'] });
  const emptyName = await server.request('DELETE', `${path}?=1`, { app: server.app });
  t.same(emptyName.body.field_errors, { '""': ['is not a known field'] }, 'a nameless parameter is named as such, not blamed on the body');
  const state = await server.request('POST', `/applications/${server.app.id}/users/q1/state?x=1`, { app: server.app, body: { state: 'disabled' } });
  t.equal(state.status, 400);
  const after = await server.request('GET', path, { app: server.app });
  t.equal(after.status, 200, 'not deleted');
  t.equal(after.body.state, 'enabled', 'not disabled');
});

t.test('platform routes need credentials of the same app', async (t) => {
  const server = await serverWithSchema(t, { fields: {} });
  const path = `/applications/${server.app.id}/users/p1/data`;
  t.equal((await server.request('GET', path)).status, 401);
  const other = await server.deps.apps.create('other');
  const credential = await server.deps.apps.createCredential(other.id);
  const wrong = await server.request('GET', path, { app: { id: other.id, key: credential.key, secret: credential.secret } });
  t.equal(wrong.status, 403);
});

t.test('concurrent merges of one user all land: writes take the user lock, none is lost', async (t) => {
  const server = await serverWithSchema(t, { fields: {} });
  const path = `/applications/${server.app.id}/users/c1/data`;
  await server.request('PUT', path, { app: server.app, body: { data: {} } });
  const writes = Array.from({ length: 25 }, (_, i) =>
    server.request('PATCH', path, { app: server.app, body: { data: { [`f${i}`]: i }, attributes: { [`n:k${i}`]: [String(i)] } } }),
  );
  t.same((await Promise.all(writes)).map((r) => r.status), Array(25).fill(200));
  const final = await server.request('GET', path, { app: server.app });
  t.equal(Object.keys(final.body.data).length, 26);
  t.equal(Object.keys(final.body.attributes).length, 25);
});

t.test('fields a schema stopped allowing: a profile read and sent back passes, and each may be removed with null', async (t) => {
  const server = await startServerWithSchema(t, { ...schema, allow_unknown_fields: true });
  const path = `/applications/${server.app.id}/users/stale/data`;
  await server.request('PUT', path, { app: server.app, body: { data: { plan: 'pro', legacy: 'x', old_flag: true } } });
  await server.deps.apps.update(server.app.id, { schema: { fields: schema.fields!, allow_unknown_fields: false } });
  const read = (await server.request('GET', path, { app: server.app })).body;
  t.same(read.data, { plan: 'pro', legacy: 'x', old_flag: true, user_id: 'stale' });

  const echoed = await server.request('PUT', path, { app: server.app, body: { data: read.data } });
  t.equal(echoed.status, 200, echoed.text);
  const removed = await server.request('PATCH', path, { app: server.app, body: { data: { legacy: null } } });
  t.equal(removed.status, 200, removed.text);
  t.same(removed.body.data, { plan: 'pro', old_flag: true, user_id: 'stale' });
  const refused = await server.request('PATCH', path, { app: server.app, body: { data: { old_flag: false } } });
  t.same(refused.body.field_errors, { old_flag: ['unknown field: the application schema does not allow unknown fields'] }, 'a new value is still refused');

  // A field PUT agrees with PATCH.
  const refusedPut = await server.request('PUT', `${path}/fields/old_flag`, { app: server.app, body: { value: false } });
  t.equal(refusedPut.status, 400, 'a field PUT of a new value is refused too');
  t.equal(refusedPut.body.code, 'E_USER_UPDATE_FAILED');
  t.same(refusedPut.body.field_errors, { old_flag: ['unknown field: the application schema does not allow unknown fields'] });
  const removedPut = await server.request('PUT', `${path}/fields/old_flag`, { app: server.app, body: { value: null } });
  t.equal(removedPut.status, 200, removedPut.text);
  t.same(removedPut.body.data, { plan: 'pro', user_id: 'stale' }, 'and null removes the field');
});

t.test('a key the caller chose is named in field errors cut to 64 characters', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const path = `/applications/${server.app.id}/users/keys/data`;
  const long = `k${'x'.repeat(299)}`;
  const res = await server.request('PATCH', path, { app: server.app, body: { data: { [long]: 1, plan: 'p' }, attributes: { [long]: ['v'] } } });
  t.equal(res.status, 400);
  t.same(Object.keys(res.body.field_errors).sort(), [`${long.slice(0, 64)}…`, `attributes.${long.slice(0, 64)}…`].sort());
  const form = new FormData();
  form.set(long, 'x');
  const part = await server.request('PUT', path, { app: server.app, rawBody: form });
  t.same(Object.keys(part.body.field_errors), [`${long.slice(0, 64)}…`], 'a part name too');
});

t.test('an attribute name holding a C1 control character is refused like a C0 one; one stored before is sent back as read', async (t) => {
  const server = await serverWithSchema(t, { fields: {} });
  const path = `/applications/${server.app.id}/users/c1/data`;
  for (const key of ['ns:a\u0001b', 'ns:a\u007fb', 'ns:a\u0085b', 'ns:a\u009bb']) {
    const res = await server.request('PATCH', path, { app: server.app, body: { attributes: { [key]: ['v'], 'ns:ok': ['v'] } } });
    t.equal(res.status, 400, JSON.stringify(key));
    t.ok(res.body.field_errors[`attributes.${key}`], `${JSON.stringify(key)} is named`);
  }
  t.equal((await server.request('GET', path, { app: server.app })).status, 404, 'nothing was created');
  const proto = await server.request('PUT', path, { app: server.app, rawBody: '{"attributes":{"__proto__":{}}}', headers: { 'content-type': 'application/json' } });
  t.ok(proto.body.field_errors?.['attributes.__proto__'], 'a key __proto__ is no attribute key, even as {}');
  const badNull = await server.request('PUT', path, { app: server.app, body: { attributes: { 'no namespace': null } } });
  t.ok(badNull.body.field_errors?.['attributes.no namespace'], 'nor is a malformed key removed as null');

  // A key from before the rule: the platform's read, sent back, still passes.
  const created = await server.request('PUT', path, { app: server.app, body: { attributes: { 'ns:ok': ['v'] } } });
  t.equal(created.status, 200, created.text);
  const { runtime, users } = server.deps;
  await runtime.run([userLock(server.app.id, 'c1')], (turn) => {
    const attributes = { 'ns:a\u0085b': ['old'], 'ns:ok': ['v'] };
    users.update(turn, server.app.id, 'c1', { data: created.body.data, attributes });
  });
  const read = (await server.request('GET', path, { app: server.app })).body;
  t.same(Object.keys(read.attributes).sort(), ['ns:a\u0085b', 'ns:ok']);
  const echoed = await server.request('PUT', path, { app: server.app, body: { attributes: read.attributes } });
  t.equal(echoed.status, 200, echoed.text);
});

/**
 * A data field `name` stored (on the user `userId`, which holds `ok`) before the rule that refuses it:
 * kept by a merge that does not name it, passed when sent back as read, and removed by null.
 */
async function keptFromBeforeTheRule(t: Test, server: TestServer, userId: string, name: string): Promise<void> {
  const path = `/applications/${server.app.id}/users/${userId}/data`;
  const { runtime, users } = server.deps;
  const stored = (await server.request('GET', path, { app: server.app })).body;
  await runtime.run([userLock(server.app.id, userId)], (turn) => {
    users.update(turn, server.app.id, userId, { data: { ...stored.data, [name]: 'old' }, attributes: {} });
  });
  const merged = await server.request('PATCH', path, { app: server.app, body: { data: { ok: 'w' } } });
  t.equal(merged.status, 200, merged.text);
  t.equal(merged.body.data[name], 'old', 'a name stored before the rule is kept by a merge that does not name it');
  const echoed = await server.request('PUT', path, { app: server.app, body: { data: merged.body.data } });
  t.equal(echoed.status, 200, `and passes sent back as read: ${echoed.text}`);
  const removed = await server.request('PATCH', path, { app: server.app, body: { data: { [name]: null } } });
  t.equal(removed.status, 200, removed.text);
  t.same(removed.body.data, { ok: 'w', user_id: userId }, 'and null removes it');
}

t.test('a data field name with a control character or of whitespace only is refused; one stored before is kept', async (t) => {
  const server = await serverWithSchema(t, { fields: {}, allow_unknown_fields: true });
  const path = `/applications/${server.app.id}/users/cc/data`;
  for (const name of ['a\u0000b', 'a\u007fb', 'a\u0085b', ' ', '\t\u00a0']) {
    const res = await server.request('PATCH', path, { app: server.app, body: { data: { [name]: 'v', ok: 'v' } } });
    t.equal(res.status, 400, JSON.stringify(name));
    t.equal(res.body.code, 'E_USER_UPDATE_FAILED');
    t.same(Object.keys(res.body.field_errors), [name], `${JSON.stringify(name)} is named`);
  }
  t.equal((await server.request('GET', path, { app: server.app })).status, 404, 'nothing was created');
  t.equal((await server.request('PUT', path, { app: server.app, body: { data: { ok: 'v' } } })).status, 200);
  const field = await server.request('PUT', `${path}/fields/${encodeURIComponent('a\u0001b')}`, { app: server.app, body: { value: 'v' } });
  t.equal(field.status, 400, 'nor through a field PUT');
  t.ok(field.body.field_errors?.['a\u0001b']);

  await keptFromBeforeTheRule(t, server, 'cc', 'a\u0085b');
});

t.test('a data field named . or .. is refused (a field path would resolve it away); one stored before is kept; a / is reached as %2F', async (t) => {
  const server = await serverWithSchema(t, { fields: {}, allow_unknown_fields: true });
  const path = `/applications/${server.app.id}/users/dots/data`;
  for (const name of ['.', '..']) {
    for (const method of ['PUT', 'PATCH']) {
      const res = await server.request(method, path, { app: server.app, body: { data: { [name]: 'v', ok: 'v' } } });
      t.equal(res.status, 400, `${method} ${name}`);
      t.equal(res.body.code, 'E_USER_UPDATE_FAILED');
      t.same(res.body.field_errors, { [name]: ['field names are not . or ..: clients and proxies resolve them away in a path'] }, `${method} ${name}: named`);
    }
    const form = new FormData();
    form.set('data', JSON.stringify({ [name]: 'v' }));
    const part = await server.request('PUT', path, { app: server.app, rawBody: form });
    t.same(Object.keys(part.body.field_errors ?? {}), [name], `in a multipart data part too: ${part.text}`);
  }
  t.equal((await server.request('GET', path, { app: server.app })).status, 404, 'nothing was created');

  const created = await server.request('PUT', path, { app: server.app, body: { data: { ok: 'v' } } });
  t.equal(created.status, 200, created.text);
  await keptFromBeforeTheRule(t, server, 'dots', '..');

  // A `/` in a name stays: the path is matched before it is decoded, so `%2F` reaches the field.
  const slashed = await server.request('PATCH', path, { app: server.app, body: { data: { 'a/b': 'v' } } });
  t.equal(slashed.status, 200, slashed.text);
  t.same((await server.request('GET', `${path}/fields/a%2Fb`, { app: server.app })).body, { value: 'v' });
  const put = await server.request('PUT', `${path}/fields/a%2Fb`, { app: server.app, body: { value: 'w' } });
  t.equal(put.body.data?.['a/b'], 'w', 'a field PUT through %2F writes it');
});

t.test('schema fields named like members of Object.prototype are fields like any other', async (t) => {
  const server = await startServerWithSchema(t, {
    fields: {
      valueOf: { type: 'string' as const, required: true },
      toString: { type: 'number' as const },
      hasOwnProperty: { type: 'boolean' as const, user_readable: true },
    },
    allow_unknown_fields: false,
  });
  const path = `/applications/${server.app.id}/users/proto-named/data`;
  const missing = await server.request('PUT', path, { app: server.app, body: { data: { toString: 1 } } });
  t.equal(missing.status, 400, 'a required field named valueOf is required on create');
  t.same(missing.body.field_errors, { valueOf: ['is required'] });
  t.equal((await server.request('GET', path, { app: server.app })).status, 404, 'nothing was created');
  t.equal((await server.request('PUT', path, { app: server.app, body: { data: { valueOf: 'v' } } })).status, 200);
  const removed = await server.request('PATCH', path, { app: server.app, body: { data: { valueOf: null } } });
  t.same(removed.body.field_errors, { valueOf: ['is required'] }, 'and cannot be removed');

  const { token } = await tokenFor(server, { user_id: 'proto-named' });
  const unchanged = await server.request('PATCH', `/me/applications/${server.app.id}/data`, { token, body: { data: { hasOwnProperty: null } } });
  t.equal(unchanged.status, 200, `null for a readable field that is not set is no write, whatever its name: ${unchanged.text}`);

  const sample = await server.request('GET', `/applications/${server.app.id}/users/__sample__/data`, { app: server.app });
  t.match(sample.body.data, { valueOf: 'example', toString: 42, hasOwnProperty: true }, 'the sample shows every field');
});

t.test('after SVC_BRAND changes, every profile names its user under the new brand, also one not written since', async (t) => {
  const dataDir = t.testdir();
  const before = await startServer(t, { dataDir });
  const app = before.app;
  const written = await before.request('PUT', `/applications/${app.id}/users/old-one/data`, { app, body: { data: { first_name: 'Ada' } } });
  t.equal(written.body.svc_user, 'old-one');
  await before.close();

  const server = await startServer(t, { dataDir, env: { SVC_BRAND: 'acme' } });
  const headers = { 'x-acme-app-key': app.key, 'x-acme-app-secret': app.secret };
  const users = `/applications/${app.id}/users`;
  await server.request('PUT', `${users}/new-one/data`, { headers, body: { data: { first_name: 'Grace' } } });
  const answers = {
    read: (await server.request('GET', `${users}/old-one/data`, { headers })).body,
    projected: (await server.request('GET', `${users}/old-one/data?fields=first_name`, { headers })).body,
    listed: (await server.request('GET', `${users}/data?id_filter=old-one`, { headers })).body.results[0],
  };
  for (const [name, body] of Object.entries(answers)) {
    t.equal(body.acme_user, 'old-one', name);
    t.notOk('svc_user' in body, `${name}: no key of the old brand`);
    t.same(body.data.first_name, 'Ada', name);
  }
  const list = (await server.request('GET', `${users}/data`, { headers })).body;
  t.same(
    list.results.map((profile: Record<string, unknown>) => Object.keys(profile)[0]),
    ['acme_user', 'acme_user'],
    'a page names every user alike',
  );
});

t.test('a profile write whose JSON body is not an object answers E_USER_UPDATE_FAILED, as its other problems, and changes nothing', async (t) => {
  const server = await startServer(t);
  const path = `/applications/${server.app.id}/users/shape/data`;
  await server.request('PUT', path, { app: server.app, body: { data: { first_name: 'Ada' } } });
  const { token } = await tokenFor(server, { email: 'shape@example.com' });
  const mePath = `/me/applications/${server.app.id}/data`;
  for (const body of [[], 'text', 7]) {
    for (const [method, target, auth] of [
      ['PUT', path, { app: server.app }],
      ['PATCH', path, { app: server.app }],
      ['PUT', mePath, { token }],
      ['PATCH', mePath, { token }],
    ] as const) {
      const res = await server.request(method, target, { ...auth, body });
      t.equal(res.status, 400, `${method} ${target} ${JSON.stringify(body)}`);
      t.equal(res.body.code, 'E_USER_UPDATE_FAILED');
      t.ok(res.body.field_errors.body, 'named on body');
    }
    const field = await server.request('PUT', `${path}/fields/first_name`, { app: server.app, body });
    t.equal(field.status, 400);
    t.equal(field.body.code, 'E_USER_UPDATE_FAILED');
    t.ok(field.body.field_errors.value, 'a field PUT names value');
  }
  t.equal((await server.request('GET', path, { app: server.app })).body.data.first_name, 'Ada', 'nothing changed');
});

t.test("every route that answers a profile answers SPEC's User profile: the same nine fields, each of its type", async (t) => {
  const server = await serverWithSchema(t);
  const { userId, token } = await tokenFor(server, { email: 'ada@example.com' });
  const app = `/applications/${server.app.id}`;
  const platformPath = `${app}/users/${userId}/data`;
  const me = `/me/applications/${server.app.id}/data`;
  await server.request('PATCH', platformPath, { app: server.app, body: { data: { plan: 'pro' } } });
  const answers: Array<[string, () => Promise<{ status: number; body: any }>]> = [
    ['platform GET', () => server.request('GET', platformPath, { app: server.app })],
    ['platform PUT', () => server.request('PUT', platformPath, { app: server.app, body: { data: { plan: 'pro', nickname: 'a' } } })],
    ['platform PATCH', () => server.request('PATCH', platformPath, { app: server.app, body: { data: { age: 3 } } })],
    ['platform field PUT', () => server.request('PUT', `${platformPath}/fields/nickname`, { app: server.app, body: { value: 'b' } })],
    ['platform state', () => server.request('POST', `${app}/users/${userId}/state`, { app: server.app, body: { state: 'enabled' } })],
    ['/me GET', () => server.request('GET', me, { token })],
    ['/me PUT', () => server.request('PUT', me, { token, body: { data: { nickname: 'c' } } })],
    ['/me PATCH', () => server.request('PATCH', me, { token, body: { data: { age: 4 } } })],
    ['/me field PUT', () => server.request('PUT', `${me}/fields/nickname`, { token, body: { value: 'd' } })],
    ['/me meta PUT', () => server.request('PUT', '/me/meta', { token, body: { last_passkey_registration_prompt: '2026-01-01T00:00:00Z' } })],
    ['list result', () => server.request('GET', `${app}/users/data`, { app: server.app }).then((res) => ({ status: res.status, body: res.body.results[0] }))],
  ];
  const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
  for (const [label, answer] of answers) {
    const { status, body } = await answer();
    t.equal(status, 200, label);
    t.strictSame(Object.keys(body).sort(), ['attributes', 'auth_level', 'connection_map', 'data', 'groups', 'meta', 'state', 'svc_user', 'verified_data'], `${label}: the nine fields`);
    t.equal(body.svc_user, userId, `${label}: svc_user`);
    t.ok(['enabled', 'disabled'].includes(body.state) && typeof body.auth_level === 'string', `${label}: state and auth_level`);
    t.ok([body.attributes, body.data, body.verified_data, body.meta, body.connection_map].every((o) => o && typeof o === 'object' && !Array.isArray(o)), `${label}: objects`);
    t.ok(Array.isArray(body.groups), `${label}: groups is an array`);
    t.equal(body.data.user_id, userId, `${label}: data.user_id`);
    t.ok(iso.test(body.meta.created) && iso.test(body.meta.modified), `${label}: meta stamps in ISO 8601`);
  }
});
