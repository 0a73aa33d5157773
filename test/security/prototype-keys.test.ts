import t from 'tap';
import { startServer } from '../helpers/server.js';
import { tokenFor } from '../helpers/tokens.js';

// Field names that are also members of Object.prototype once made every field-error collector throw (500).
const NAMES = ['constructor', 'valueOf', 'toString', 'hasOwnProperty', '__proto__'];

t.test('field errors under names of Object.prototype members answer 400 naming the field', async (t) => {
  const server = await startServer(t);
  await server.deps.apps.update(server.app.id, { schema: { fields: {}, allow_unknown_fields: false } });
  const { token } = await tokenFor(server, { email: 'ada@example.com' });
  for (const name of NAMES) {
    const bodyWith = (extra: string) => JSON.parse(`{${extra}, "${name}": 1}`);
    const requests = [
      // A strict valibot body (src/lib/validate.ts).
      server.request('POST', '/hub/auth/token', { body: bodyWith('"refresh_token": "x"') }),
      // A profile write body, then its data against the schema (users/request-body.ts, users/profile-change.ts).
      server.request('PUT', `/me/applications/${server.app.id}/data`, { token, body: bodyWith('"data": {}') }),
      server.request('PUT', `/me/applications/${server.app.id}/data`, { token, body: { data: bodyWith('"first_name": "Ada"') } }),
    ];
    for (const res of await Promise.all(requests)) {
      t.equal(res.status, 400, `${name}: ${res.text}`);
      t.ok(Object.hasOwn(res.body.field_errors ?? {}, name), `${name} is named`);
    }
  }
});

// valibot's records and loose objects leave these keys out of their output without an issue: once
// they were dropped from group meta, link data, app schemas and OIDC config, and the write answered 200.
t.test('keys that valibot records would drop unsaid are refused with 400, and nothing is made', async (t) => {
  const admin = 'admin-token-0123456789';
  const server = await startServer(t, { env: { SVC_ADMIN_TOKEN: admin } });
  const { token } = await tokenFor(server, { email: 'ada@example.com' });
  for (const name of ['constructor', '__proto__', 'prototype']) {
    const key = JSON.stringify(name);
    const raw = (json: string) => ({ rawBody: json, headers: { 'content-type': 'application/json' } });
    const requests = [
      server.request('POST', '/me/groups', { token, ...raw(`{"name": "g", "meta": {${key}: 1}}`) }),
      server.request('POST', '/hub/auth/magic', { app: server.app, ...raw(`{"verification_type": "email", "data": {"email": "b@example.com", ${key}: 1}}`) }),
      server.request('POST', `/applications/${server.app.id}/oidc-clients`, { app: server.app, ...raw(`{"name": "c", "config": {${key}: "x"}}`) }),
      server.request('POST', '/admin/applications', {
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        rawBody: `{"name": "a", "schema": {"fields": {${key}: {"type": "number"}}}}`,
      }),
    ];
    for (const res of await Promise.all(requests)) {
      t.equal(res.status, 400, `${name}: ${res.text}`);
      t.match(res.body.message + JSON.stringify(res.body.field_errors), /may not use __proto__, prototype, constructor as keys/);
    }
  }
  t.equal((await server.request('GET', '/me/groups', { token })).body.total_results, 0, 'no group');
  t.equal((await server.request('GET', `/applications/${server.app.id}/oidc-clients`, { app: server.app })).body.total_results, 0, 'no client');
  t.equal((await server.request('GET', `/applications/${server.app.id}/users/data?lookup_filter=b@example.com`, { app: server.app })).body.total_results, 0, 'no user');
});

// Values are stored as msgpack, whose decoder reads a key __proto__ back as __proto_: kept below the top
// level, such a key was answered as sent and read back renamed.
t.test('a key __proto__ anywhere inside group meta or OIDC config is refused with 400, and nothing changes', async (t) => {
  const server = await startServer(t);
  const { token } = await tokenFor(server, { email: 'ada@example.com' });
  const raw = (json: string) => ({ rawBody: json, headers: { 'content-type': 'application/json' } });
  const groups = `/applications/${server.app.id}/groups`;
  const clients = `/applications/${server.app.id}/oidc-clients`;
  const group = (await server.request('POST', groups, { app: server.app, body: { name: 'g', meta: { a: { b: 1 } } } })).body;
  const client = (await server.request('POST', clients, { app: server.app, body: { name: 'c', config: { custom: { b: 1 } } } })).body;
  for (const nested of ['{"a": {"__proto__": {"x": 1}, "b": 2}}', '{"a": [1, {"b": {"__proto__": 1}}]}']) {
    const requests = [
      server.request('POST', '/me/groups', { token, ...raw(`{"name": "g", "meta": ${nested}}`) }),
      server.request('POST', groups, { app: server.app, ...raw(`{"name": "g", "meta": ${nested}}`) }),
      server.request('PUT', `${groups}/${group.id}`, { app: server.app, ...raw(`{"meta": ${nested}}`) }),
      server.request('POST', clients, { app: server.app, ...raw(`{"name": "c", "config": ${nested}}`) }),
      server.request('PUT', `${clients}/${client.id}`, { app: server.app, ...raw(`{"config": ${nested}}`) }),
    ];
    for (const res of await Promise.all(requests)) {
      t.equal(res.status, 400, `${nested}: ${res.text}`);
      t.equal(res.body.code, 'E_VALIDATION');
      t.match(JSON.stringify(res.body.field_errors), /__proto__/, 'the message names the key');
    }
  }
  t.equal((await server.request('GET', '/me/groups', { token })).body.total_results, 0, 'no group made on /me');
  const groupNow = await server.request('GET', `${groups}/${group.id}`, { app: server.app });
  t.same(groupNow.body.meta, { a: { b: 1 } }, 'the group keeps its meta');
  t.equal((await server.request('GET', groups, { app: server.app })).body.total_results, 1, 'no group made by the app');
  const clientNow = await server.request('GET', `${clients}/${client.id}`, { app: server.app });
  t.same(clientNow.body.config.custom, { b: 1 }, 'the client keeps its config');
  t.equal((await server.request('GET', clients, { app: server.app })).body.total_results, 1, 'no client made');
});
