import t from 'tap';
import { startServer } from '../helpers/server.js';
import { signInByLink } from '../helpers/sign-in.js';
import { manualClock } from '../../src/lib/clock.js';

const ADMIN_TOKEN = 'admin-token-0123456789abcdef';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** Every admin route, addressed at `app` and its credential. */
const adminRoutes = (app: { id: string; key: string }): Array<[string, string]> => [
  ['POST', '/admin/applications'],
  ['GET', '/admin/applications'],
  ['GET', `/admin/applications/${app.id}`],
  ['PATCH', `/admin/applications/${app.id}`],
  ['POST', `/admin/applications/${app.id}/credentials`],
  ['GET', `/admin/applications/${app.id}/credentials`],
  ['DELETE', `/admin/applications/${app.id}/credentials/${app.key}`],
];

const server = await startServer(t, { env: { SVC_ADMIN_TOKEN: ADMIN_TOKEN } });

t.test('applications: create, get, list, update', async (t) => {
  const schema = { fields: { nickname: { type: 'string', user_writable: true } }, allow_unknown_fields: false };
  const created = await server.request('POST', '/admin/applications', { headers: admin, body: { name: ' Shop ', schema } });
  t.equal(created.status, 200);
  t.match(created.body.id, /^app_[0-9A-Z]{26}$/);
  t.equal(created.body.name, 'Shop', 'name is trimmed');
  t.same(created.body.schema, schema);

  const plain = await server.request('POST', '/admin/applications', { headers: admin, body: { name: 'Plain' } });
  t.same(plain.body.schema, { fields: {}, allow_unknown_fields: true }, 'schema defaults to empty and open');

  const got = await server.request('GET', `/admin/applications/${created.body.id}`, { headers: admin });
  t.equal(got.status, 200);
  t.same(got.body, created.body);

  const list = await server.request('GET', '/admin/applications', { headers: admin });
  t.equal(list.status, 200);
  t.same(
    list.body.results.map((a: any) => a.name),
    ['default', 'Shop', 'Plain'],
  );
  t.equal(list.body.total_results, 3);

  const renamed = await server.request('PATCH', `/admin/applications/${created.body.id}`, {
    headers: admin,
    body: { name: 'Shop 2' },
  });
  t.equal(renamed.status, 200);
  t.equal(renamed.body.name, 'Shop 2');
  t.same(renamed.body.schema, schema, 'a partial update keeps the other fields');

  const newSchema = { fields: { photo: { type: 'image' } } };
  const reschema = await server.request('PATCH', `/admin/applications/${created.body.id}`, {
    headers: admin,
    body: { schema: newSchema },
  });
  t.same(reschema.body.schema, { fields: { photo: { type: 'image' } }, allow_unknown_fields: true });
  t.equal(reschema.body.name, 'Shop 2');
  const reread = await server.request('GET', `/admin/applications/${created.body.id}`, { headers: admin });
  t.same(reread.body, reschema.body, 'the update is stored');

  const deleted = await server.request('DELETE', `/admin/applications/${created.body.id}`, { headers: admin });
  t.equal(deleted.status, 405, 'applications cannot be deleted');
  t.equal(deleted.body.code, 'E_METHOD_NOT_ALLOWED');
  t.ok(server.deps.apps.get(created.body.id), 'and it is still there');

  const config = await server.request('GET', '/hub/app-config', {
    headers: { [server.deps.config.names.appKeyHeader]: server.app.key },
  });
  t.equal(config.body.app.name, 'default', 'app-config still answers its own app');
});

t.test('an application answers created_at, updated_at and schema_updated_at, the last moving only when the schema changes', async (t) => {
  const clock = manualClock();
  const own = await startServer(t, { env: { SVC_ADMIN_TOKEN: ADMIN_TOKEN }, clock });
  const at = (step: number) => new Date(Date.parse('2026-01-01T00:00:00Z') + step * 1000).toISOString();
  const patch = async (body: object) => {
    clock.advance(1000);
    const res = await own.request('PATCH', `/admin/applications/${created.id}`, { headers: admin, body });
    t.equal(res.status, 200);
    return res.body;
  };
  const schema = { fields: { nickname: { type: 'string', user_readable: true } }, allow_unknown_fields: true };
  const created = (await own.request('POST', '/admin/applications', { headers: admin, body: { name: 'Stamps', schema } })).body;
  t.strictSame(Object.keys(created).sort(), ['created_at', 'id', 'name', 'schema', 'schema_updated_at', 'updated_at']);
  t.strictSame([created.created_at, created.updated_at, created.schema_updated_at], [at(0), at(0), at(0)]);

  const renamed = await patch({ name: 'Stamps 2' });
  t.strictSame([renamed.created_at, renamed.updated_at, renamed.schema_updated_at], [at(0), at(1), at(0)], 'a rename moves updated_at only');
  const sameSchema = await patch({ schema: { allow_unknown_fields: true, fields: { nickname: { user_readable: true, type: 'string' } } } });
  t.strictSame([sameSchema.updated_at, sameSchema.schema_updated_at], [at(2), at(0)], 'the same schema sent back, its keys in another order, is no schema change');
  const changed = await patch({ schema: { fields: { nickname: { type: 'string' } } } });
  t.strictSame([changed.updated_at, changed.schema_updated_at], [at(3), at(3)], 'a changed schema moves both');
  const read = await own.request('GET', `/admin/applications/${created.id}`, { headers: admin });
  t.strictSame(read.body, changed, 'as stored');
});

t.test('validation errors answer 400 with field_errors and store nothing', async (t) => {
  const before = server.deps.apps.list().length;
  const cases: Array<[unknown, string]> = [
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ name: 42 }, 'name'],
    [{ name: 'Shop\u0085Two' }, 'name'],
    [{ name: 'x', extra: 1 }, 'extra'],
    [{ name: 'x', schema: { fields: { a: { type: 'date' } } } }, 'schema.fields.a.type'],
    [{ name: 'x', schema: { fields: { 'bad name': { type: 'string' } } } }, 'schema.fields.bad name'],
    [{ name: 'x', schema: { fields: { a: { type: 'string', colour: 'red' } } } }, 'schema.fields.a.colour'],
    [{ name: 'x', schema: { allow_unknown_fields: 'yes' } }, 'schema.allow_unknown_fields'],
    [{ name: 'x', schema: [] }, 'schema'],
    [{ name: 'x', schema: { fields: [] } }, 'schema.fields'],
    [{ name: 'x', schema: { fields: { a: [] } } }, 'schema.fields.a'],
    [{ name: 'x', schema: { fields: { email: { type: 'number' } } } }, 'schema.fields'],
    [{ name: 'x', schema: { fields: { user_id: { type: 'string', user_writable: true } } } }, 'schema.fields'],
    [[], 'body'],
  ];
  for (const [body, field] of cases) {
    const res = await server.request('POST', '/admin/applications', { headers: admin, body });
    t.equal(res.status, 400, JSON.stringify(body));
    t.equal(res.body.code, 'E_VALIDATION');
    t.ok(res.body.field_errors?.[field], `field_errors names ${field}: ${JSON.stringify(res.body.field_errors)}`);
  }
  const long = await server.request('POST', '/admin/applications', { headers: admin, body: { name: 'x'.repeat(201) } });
  t.same(long.body.field_errors, { name: ['name is at most 200 characters'] }, 'in words, as every validation message');
  const update = await server.request('PATCH', `/admin/applications/${server.app.id}`, {
    headers: admin,
    body: { name: '   ' },
  });
  t.equal(update.status, 400);
  t.ok(update.body.field_errors.name);
  const notJson = await server.request('POST', '/admin/applications', {
    headers: { ...admin, 'content-type': 'application/json' },
    rawBody: '{"name":',
  });
  t.equal(notJson.status, 400);
  t.equal(notJson.body.code, 'E_BAD_JSON');
  t.equal(server.deps.apps.list().length, before, 'no application was created');
  const rights = await server.request('POST', '/admin/applications', {
    headers: admin,
    body: { name: 'Rights', schema: { fields: { email: { type: 'string', user_writable: false } } } },
  });
  t.equal(rights.status, 200, 'an implicit field may be listed to set its rights');
  t.same(rights.body.schema.fields.email, { type: 'string', user_writable: false });
  t.equal(server.deps.apps.require(server.app.id).name, 'default', 'no application was changed');
});

t.test('unknown applications and credentials answer 404', async (t) => {
  const missing = 'app_01JZZZZZZZZZZZZZZZZZZZZZZZ';
  for (const [method, path] of [
    ['GET', `/admin/applications/${missing}`],
    ['PATCH', `/admin/applications/${missing}`],
    ['POST', `/admin/applications/${missing}/credentials`],
    ['GET', `/admin/applications/${missing}/credentials`],
  ]) {
    const res = await server.request(method, path, { headers: admin, body: method === 'PATCH' ? { name: 'x' } : undefined });
    t.equal(res.status, 404, `${method} ${path}`);
    t.equal(res.body.code, 'E_APPLICATION_NOT_FOUND');
  }
  const res = await server.request('DELETE', `/admin/applications/${server.app.id}/credentials/key_nope`, { headers: admin });
  t.equal(res.status, 404);
  t.equal(res.body.code, 'E_CREDENTIAL_NOT_FOUND');
  // A credential deleted under an application that does not exist: the application is what is missing.
  for (const key of ['key_nope', server.app.key]) {
    const gone = await server.request('DELETE', `/admin/applications/${missing}/credentials/${key}`, { headers: admin });
    t.equal(gone.status, 404, `DELETE of ${key} under an unknown application`);
    t.equal(gone.body.code, 'E_APPLICATION_NOT_FOUND');
  }
  t.equal(server.deps.apps.listCredentials(server.app.id).length, 1, 'the credential is still there');
  const other = await server.deps.apps.create('other-owner');
  const theirs = await server.deps.apps.createCredential(other.id);
  const crossed = await server.request('DELETE', `/admin/applications/${server.app.id}/credentials/${theirs.key}`, { headers: admin });
  t.equal(crossed.status, 404, 'a key of another app, named under this one');
  t.equal(crossed.body.code, 'E_CREDENTIAL_NOT_FOUND');
  t.equal(server.deps.apps.authenticate(theirs.key, theirs.secret), other.id, 'and it still authenticates');
});

t.test('credentials: create shows the secret once, list masks it, delete revokes it', async (t) => {
  const app = (await server.request('POST', '/admin/applications', { headers: admin, body: { name: 'Creds' } })).body;
  for (const body of [{ foo: 1 }, []]) {
    const refused = await server.request('POST', `/admin/applications/${app.id}/credentials`, { headers: admin, body });
    t.equal(refused.status, 400, `${JSON.stringify(body)}: the body carries nothing`);
  }
  t.equal((await server.request('GET', `/admin/applications/${app.id}/credentials`, { headers: admin })).body.total_results, 0, 'and none was made');
  const created = await server.request('POST', `/admin/applications/${app.id}/credentials`, { headers: admin });
  t.equal(created.status, 200);
  t.match(created.body.key, /^key_[a-z2-7]{24}$/);
  t.match(created.body.secret, /^sec_[A-Za-z0-9_-]{43}$/);
  t.equal(created.body.app_id, app.id);

  const list = await server.request('GET', `/admin/applications/${app.id}/credentials`, { headers: admin });
  t.equal(list.status, 200);
  t.equal(list.body.total_results, 1);
  t.equal(list.body.results[0].key, created.body.key);
  t.equal(list.body.results[0].secret, `${created.body.secret.slice(0, 6)}…${created.body.secret.slice(-4)}`);
  t.notOk(list.text.includes(created.body.secret), 'the list never shows the secret');

  const other = await server.request('DELETE', `/admin/applications/${server.app.id}/credentials/${created.body.key}`, {
    headers: admin,
  });
  t.equal(other.status, 404, 'a credential is deleted only through its own application');

  const deleted = await server.request('DELETE', `/admin/applications/${app.id}/credentials/${created.body.key}`, {
    headers: admin,
  });
  t.equal(deleted.status, 204);
  const after = await server.request('GET', `/admin/applications/${app.id}/credentials`, { headers: admin });
  t.same(after.body, { total_results: 0, results: [] });
  const again = await server.request('DELETE', `/admin/applications/${app.id}/credentials/${created.body.key}`, {
    headers: admin,
  });
  t.equal(again.status, 404);
});

t.test("an application's credentials are listed oldest first, as every other list", async (t) => {
  const clock = manualClock();
  const own = await startServer(t, { env: { SVC_ADMIN_TOKEN: ADMIN_TOKEN }, clock });
  const made = [own.app.key];
  for (let i = 0; i < 8; i++) {
    clock.advance(1);
    made.push((await own.request('POST', `/admin/applications/${own.app.id}/credentials`, { headers: admin })).body.key);
  }
  const list = await own.request('GET', `/admin/applications/${own.app.id}/credentials`, { headers: admin });
  t.strictSame(
    list.body.results.map((c: { key: string }) => c.key),
    made,
  );
});

t.test('of concurrent deletes of one credential only one answers 204; the others find it gone', async (t) => {
  const app = (await server.request('POST', '/admin/applications', { headers: admin, body: { name: 'Race' } })).body;
  const { key } = (await server.request('POST', `/admin/applications/${app.id}/credentials`, { headers: admin })).body;
  const path = `/admin/applications/${app.id}/credentials/${key}`;
  const answers = await Promise.all(Array.from({ length: 8 }, () => server.request('DELETE', path, { headers: admin })));
  t.strictSame(
    answers.map((res) => res.status).sort(),
    [204, 404, 404, 404, 404, 404, 404, 404],
  );
  for (const res of answers.filter((res) => res.status === 404)) t.equal(res.body.code, 'E_CREDENTIAL_NOT_FOUND');

  // Started in one turn, as a request and the CLI may: each reads before any of them commits.
  const second = await server.deps.apps.createCredential(app.id);
  const revokes = await Promise.allSettled([1, 2, 3].map(() => server.deps.apps.revokeCredential(app.id, second.key)));
  t.strictSame(revokes.map((outcome) => outcome.status).sort(), ['fulfilled', 'rejected', 'rejected']);
});

t.test('a missing or wrong admin token answers 401 on every route', async (t) => {
  const routes = adminRoutes(server.app);
  const wrong: Record<string, string>[] = [
    {},
    { authorization: `Bearer ${ADMIN_TOKEN}x` },
    { authorization: `Bearer ${ADMIN_TOKEN.slice(0, -1)}` },
    { authorization: ADMIN_TOKEN },
    { authorization: `Basic ${ADMIN_TOKEN}` },
    { authorization: 'Bearer ' },
  ];
  for (const [method, path] of routes) {
    for (const headers of wrong) {
      const res = await server.request(method, path, { headers, body: method === 'GET' || method === 'DELETE' ? undefined : { name: 'x' } });
      t.equal(res.status, 401, `${method} ${path} with ${JSON.stringify(headers)}`);
      t.equal(res.body.code, 'E_UNAUTHORIZED');
    }
  }
  t.equal(server.deps.apps.listCredentials(server.app.id).length, 1, 'the default credential survived');
  t.equal(server.deps.apps.require(server.app.id).name, 'default');
  const lower = await server.request('GET', '/admin/applications', { headers: { authorization: `bearer ${ADMIN_TOKEN}` } });
  t.equal(lower.status, 200, 'the scheme name is case-insensitive');
});

t.test('without SVC_ADMIN_TOKEN every /admin route answers 404', async (t) => {
  const off = await startServer(t);
  for (const [method, path] of adminRoutes(off.app)) {
    const res = await off.request(method, path, { headers: admin });
    t.equal(res.status, 404, `${method} ${path}`);
    t.equal(res.body.code, 'E_NOT_FOUND');
  }
  t.equal(off.deps.apps.listCredentials(off.app.id).length, 1);
});

t.test('a schema that takes email from users does not hand sign-in to an account whose user wrote the address before', async (t) => {
  const own = await startServer(t, { env: { SVC_ADMIN_TOKEN: ADMIN_TOKEN } });
  const appId = own.app.id;
  const me = `/me/applications/${appId}/data`;
  // Users may write email (the default): a signed-in user writes someone else's address into its own profile.
  const attacker = await signInByLink(own, 'attacker@example.com');
  const wrote = await own.request('PATCH', me, { token: attacker.access_token, body: { data: { email: 'victim@example.com' } } });
  t.equal(wrote.status, 200);
  const closed = await own.request('PATCH', `/admin/applications/${appId}`, {
    headers: admin,
    body: { schema: { fields: { email: { type: 'string', user_readable: true } } } },
  });
  t.equal(closed.status, 200);
  t.notOk('addresses_closed_at' in closed.body, 'the admin answer keeps its shape');
  t.same(Object.keys((await own.request('GET', `/admin/applications/${appId}`, { headers: admin })).body).sort(), Object.keys(closed.body).sort());

  const victim = await signInByLink(own, 'victim@example.com');
  t.not(victim.app_user_id, attacker.app_user_id, 'the address it wrote itself does not sign the victim in to the attacker');
  t.equal((await own.request('GET', me, { token: victim.access_token })).body.data.email, 'victim@example.com');

  // A user that signed in after the change holds only what the app wrote or it proved: its address names it.
  const later = await signInByLink(own, 'later@example.com');
  const given = await own.request('PATCH', `/applications/${appId}/users/${later.app_user_id}/data`, {
    app: own.app,
    body: { data: { email: 'assigned@example.com' } },
  });
  t.equal(given.status, 200);
  t.equal((await signInByLink(own, 'assigned@example.com')).app_user_id, later.app_user_id, 'an address the app gave names its holder');
});
