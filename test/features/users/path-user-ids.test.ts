import t from 'tap';
import { startServerWithSchema } from '../../helpers/schema.js';
import { storeDigest } from '../../helpers/store-digest.js';
import { buildRoutes } from '../../../src/app.js';

// A `:user` no user could have, on every platform route that takes one (docs/API.md, User profiles, IDs):
// a route about an existing user answers it as unknown, 404; an upsert, which would create it, 400.

type Case = { method: string; pattern: string; body?: unknown };

const aboutExistingUser: Case[] = [
  { method: 'GET', pattern: '/applications/:app/users/:user/data' },
  { method: 'DELETE', pattern: '/applications/:app/users/:user/data' },
  { method: 'POST', pattern: '/applications/:app/users/:user/state', body: { state: 'disabled' } },
  { method: 'GET', pattern: '/applications/:app/users/:user/data/fields/:field' },
  { method: 'PUT', pattern: '/applications/:app/users/:user/data/fields/:field', body: { value: 'x' } },
  { method: 'POST', pattern: '/applications/:app/users/:user/signout', body: { sign_out_all: true } },
];
const upserts: Case[] = [
  { method: 'PUT', pattern: '/applications/:app/users/:user/data', body: { data: { nickname: 'x' } } },
  { method: 'PATCH', pattern: '/applications/:app/users/:user/data', body: { data: { nickname: 'x' } } },
];

/** Path segments (as sent) that are no user ID: too long, or characters outside ADDENDUM §1's set. */
const malformed = ['a'.repeat(129), 'a'.repeat(3000), 'a%2Fb', 'a%20b', '%C3%A9', 'a%00b'];

const server = await startServerWithSchema(t, { fields: { nickname: { type: 'string' } } });
const pathOf = (pattern: string, user: string) =>
  pattern.replace(':app', server.app.id).replace(':user', user).replace(':field', 'nickname');
// Users that are there, so "changes nothing" covers more than an empty store.
for (const user of ['u1', 'user_01J0000000000000000000000A']) {
  const made = await server.request('PUT', pathOf('/applications/:app/users/:user/data', user), { app: server.app, body: { data: { nickname: 'n' } } });
  if (made.status !== 200) throw new Error(`seeding ${user} answered ${made.status}`);
}

t.test('every platform route with a :user parameter is one of these cases', async (t) => {
  const withUser = buildRoutes(server.deps)
    .filter((route) => route.path.includes('/:user/'))
    .map((route) => `${route.method} ${route.path}`);
  t.same(withUser.sort(), [...aboutExistingUser, ...upserts].map((c) => `${c.method} ${c.pattern}`).sort());
});

t.test('a route about an existing user answers an ID no user could have as unknown: 404 E_USER_NOT_FOUND', async (t) => {
  const before = storeDigest(server.deps.store);
  // The path words name no user either: `__uuid__` creates one only on an upsert, `__sample__` is the example.
  for (const user of [...malformed, '__sample__', '__uuid__', '__default__']) {
    for (const { method, pattern, body } of aboutExistingUser) {
      if (user === '__sample__' && method === 'GET' && pattern.endsWith('/data')) continue; // the example profile's own route
      const res = await server.request(method, pathOf(pattern, user), { app: server.app, body });
      t.equal(res.status, 404, `${method} ${pattern} with ${user.slice(0, 20)}`);
      t.match(res.body, { statusCode: 404, error: 'Not Found', code: 'E_USER_NOT_FOUND', message: /^user ".*" not found$/, messages: [String] });
    }
  }
  t.equal(storeDigest(server.deps.store), before, 'nothing changed');
});

t.test('an upsert refuses an ID it cannot create: 400 E_VALIDATION naming the user', async (t) => {
  const before = storeDigest(server.deps.store);
  for (const user of [...malformed, '__sample__']) {
    for (const { method, pattern, body } of upserts) {
      const res = await server.request(method, pathOf(pattern, user), { app: server.app, body });
      t.equal(res.status, 400, `${method} ${pattern} with ${user.slice(0, 20)}`);
      t.match(res.body, { statusCode: 400, error: 'Bad Request', code: 'E_VALIDATION', field_errors: { user: [String] } });
    }
  }
  t.equal(storeDigest(server.deps.store), before, 'nothing changed');
  t.equal(server.deps.users.count(server.app.id), 2);
});

t.test('the users that are there still answer on every route about an existing user', async (t) => {
  const field = await server.request('GET', pathOf('/applications/:app/users/:user/data/fields/:field', 'u1'), { app: server.app });
  t.same(field.body, { value: 'n' });
  const state = await server.request('POST', pathOf('/applications/:app/users/:user/state', 'user_01J0000000000000000000000A'), {
    app: server.app,
    body: { state: 'disabled' },
  });
  t.equal(state.status, 200, 'a generated-looking ID is a user ID like any other');
});
