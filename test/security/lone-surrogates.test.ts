import t, { type Test } from 'tap';
import { startServerWithSchema } from '../helpers/schema.js';
import { tokenFor } from '../helpers/tokens.js';
import { storeDigest } from '../helpers/store-digest.js';
import type { TestServer } from '../helpers/server.js';
import { manualClock } from '../../src/lib/clock.js';

// JSON may escape half of a UTF-16 pair on its own (`"\ud800"`): JSON.parse makes a string no UTF-8
// can hold, which would be stored as something else than was sent. Such a body is refused whole.
// Bodies are written as raw text here so that each escape is exactly what the test names.

// The clock stands still: the first `/me` call stamps `meta.last_active`, later ones leave the store alone.
const adminToken = 'admin-token-0123456789';
const admin = { authorization: `Bearer ${adminToken}` };
const server = await startServerWithSchema(
  t,
  { fields: { settings: { type: 'object', user_readable: true, user_writable: true } } },
  { clock: manualClock(), env: { SVC_ADMIN_TOKEN: adminToken } },
);
const { token } = await tokenFor(server, { email: 'surrogates@example.com' });
const me = `/me/applications/${server.app.id}/data`;
const platform = `/applications/${server.app.id}/users/ext-1/data`;
for (const first of [
  await server.request('PUT', platform, { app: server.app, body: { data: { city: 'Oslo' } } }),
  await server.request('GET', me, { token }),
]) {
  if (first.status !== 200) throw new Error(`setting up answered ${first.status}: ${first.text}`);
}

const json = (text: string, headers: Record<string, string> = {}) => ({ rawBody: text, headers: { ...headers, 'content-type': 'application/json' } });

/** `send` is answered 400 with `code` and `field_errors` of just `field`, and changes nothing stored. */
async function refused(t: Test, send: () => ReturnType<TestServer['request']>, code: string, field: string) {
  const before = storeDigest(server.deps.store);
  const res = await send();
  t.equal(res.status, 400, res.text);
  t.equal(res.body.code, code);
  t.same(Object.keys(res.body.field_errors), [field]);
  t.match(res.body.field_errors[field][0], /lone surrogate/);
  t.equal(storeDigest(server.deps.store), before, 'nothing is stored');
}

t.test('a profile PUT, on the platform and on /me', async (t) => {
  for (const [path, auth] of [[platform, { app: server.app }], [me, { token }]] as const) {
    await refused(t, () => server.request('PUT', path, { ...auth, ...json('{"data":{"city":"\\ud800"}}') }), 'E_VALIDATION', 'data.city');
    await refused(t, () => server.request('PUT', path, { ...auth, ...json('{"data":{"\\udfff":"x"}}') }), 'E_VALIDATION', 'data.\\udfff');
    await refused(t, () => server.request('PATCH', path, { ...auth, ...json('{"attributes":{"crm:tags":["ok","a\\udbffb"]}}') }), 'E_VALIDATION', 'attributes.crm:tags[1]');
    await refused(t, () => server.request('PUT', `${path}/fields/settings`, { ...auth, ...json('{"value":{"x":["\\ud83d"]}}') }), 'E_VALIDATION', 'value.x[0]');
  }
});

t.test('a JSON part of a multipart profile write', async (t) => {
  const form = () => {
    const body = new FormData();
    body.set('data', '{"city":"Bergen","nested":{"\\ude00":1}}');
    return body;
  };
  await refused(t, () => server.request('PUT', platform, { app: server.app, rawBody: form() }), 'E_USER_UPDATE_FAILED', 'data.nested.\\ude00');
  const labelled = () => {
    const body = new FormData();
    body.set('attributes', new Blob(['{"crm:x":["\\udc00"]}'], { type: 'application/json' }));
    return body;
  };
  await refused(t, () => server.request('PATCH', me, { token, rawBody: labelled() }), 'E_USER_UPDATE_FAILED', 'attributes.crm:x[0]');
});

t.test('a group create, on /me and on the platform', async (t) => {
  const groups = `/applications/${server.app.id}/groups`;
  await refused(t, () => server.request('POST', '/me/groups', { token, ...json('{"name":"club \\udc00"}') }), 'E_VALIDATION', 'name');
  await refused(t, () => server.request('POST', '/me/groups', { token, ...json('{"name":"club","meta":{"\\ud800x":true}}') }), 'E_VALIDATION', 'meta.\\ud800x');
  await refused(t, () => server.request('POST', groups, { app: server.app, ...json('{"name":"club","meta":{"tags":["\\uDFFF"]}}') }), 'E_VALIDATION', 'meta.tags[0]');
});

t.test('app-level writes: an OIDC client, an application schema', async (t) => {
  const clients = `/applications/${server.app.id}/oidc-clients`;
  await refused(t, () => server.request('POST', clients, { app: server.app, ...json('{"name":"\\ud800"}') }), 'E_VALIDATION', 'name');
  await refused(t, () => server.request('POST', clients, { app: server.app, ...json('{"name":"c","config":{"\\udbff":1}}') }), 'E_VALIDATION', 'config.\\udbff');
  const application = `/admin/applications/${server.app.id}`;
  await refused(t, () => server.request('PATCH', application, json('{"schema":{"fields":{"\\udc00":{"type":"string"}}}}', admin)), 'E_VALIDATION', 'schema.fields.\\udc00');
});

t.test('a body that is one lone surrogate, and one inside a top-level array', async (t) => {
  await refused(t, () => server.request('POST', '/me/groups', { token, ...json('"\\ud800"') }), 'E_VALIDATION', 'body');
  await refused(t, () => server.request('POST', '/me/groups', { token, ...json('["\\ud800"]') }), 'E_VALIDATION', '[0]');
});

t.test('a pair of escaped surrogates is one character, and round-trips exactly', async (t) => {
  const put = await server.request('PUT', platform, { app: server.app, ...json('{"data":{"city":"\\ud83d\\ude00","\\uD83D\\uDE03":"key"}}') });
  t.equal(put.status, 200, put.text);
  const got = await server.request('GET', platform, { app: server.app });
  t.equal(got.body.data.city, '\u{1F600}');
  t.equal(got.body.data['\u{1F603}'], 'key');
  t.ok(got.text.includes('"city":"\u{1F600}"'), 'the prepared body holds the character as UTF-8');

  const group = await server.request('POST', '/me/groups', { token, ...json('{"name":"club \\ud83d\\ude00","meta":{"\\ud83d\\ude00":"\\ud83d\\ude00"}}') });
  t.equal(group.status, 200, group.text);
  const read = await server.request('GET', `/me/groups/${group.body.group.id}`, { token });
  t.equal(read.body.group.name, 'club \u{1F600}');
  t.same(read.body.group.meta, { '\u{1F600}': '\u{1F600}' });

  const text = await server.request('PATCH', platform, { app: server.app, ...json('{"data":{"note":"a literal \\\\ud800 is text"}}') });
  t.equal(text.status, 200, 'an escaped backslash before u is no surrogate');
  t.equal(text.body.data.note, 'a literal \\ud800 is text');
});
