import t from 'tap';
import { startServerWithSchema } from '../helpers/schema.js';
import { tokenFor } from '../helpers/tokens.js';
import { storeDigest } from '../helpers/store-digest.js';
import { userLock } from '../../src/features/users/directory.js';
import { GroupService } from '../../src/features/groups/group-service.js';

// Names a person reads refuse the characters that make them show otherwise than written (docs/API.md:
// the bidirectional controls of the "Trojan Source" trick, and the line and paragraph separators) with
// the 400 and code each gives a control character; free profile values keep them. (No answer holding
// U+2028 goes into an assertion's message: tap's parser reads it as a line end.)

const MISLEADING = ['\u061C', '\u200E', '\u200F', '\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069', '\u2028', '\u2029'];
const hex = (c: string) => `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

const admin = 'admin-token-0123456789';
const server = await startServerWithSchema(t, { fields: {}, allow_unknown_fields: true }, { env: { SVC_ADMIN_TOKEN: admin } });
const app = server.app;
const { token, userId } = await tokenFor(server, { email: 'owner@example.com' });
const profilePath = `/applications/${app.id}/users/${userId}/data`;
const group = (await server.request('POST', '/me/groups', { token, body: { name: 'Sales' } })).body.group;
const client = (await server.request('POST', `/applications/${app.id}/oidc-clients`, { app, body: { name: 'Web' } })).body;

type Case = { what: string; method: string; path: string; body: (name: string) => unknown; field: (name: string) => string; code?: string; bearer?: boolean; admin?: boolean };

const cases: Case[] = [
  { what: 'group name on /me', method: 'POST', path: '/me/groups', bearer: true, body: (n) => ({ name: n }), field: () => 'name' },
  { what: 'group rename on /me', method: 'PUT', path: `/me/groups/${group.id}`, bearer: true, body: (n) => ({ name: n }), field: () => 'name' },
  { what: 'group name (platform)', method: 'POST', path: `/applications/${app.id}/groups`, body: (n) => ({ name: n }), field: () => 'name' },
  { what: 'role', method: 'POST', path: `/applications/${app.id}/groups/${group.id}/members`, body: (n) => ({ email: 'm@example.com', roles: ['ok', n] }), field: () => 'roles[1]' },
  { what: 'application name', method: 'POST', path: '/admin/applications', admin: true, body: (n) => ({ name: n }), field: () => 'name' },
  { what: 'OIDC client name', method: 'POST', path: `/applications/${app.id}/oidc-clients`, body: (n) => ({ name: n }), field: () => 'name' },
  { what: 'OIDC hub title', method: 'PUT', path: `/applications/${app.id}/oidc-clients/${client.id}`, body: (n) => ({ config: { hub_title: n } }), field: () => 'config.hub_title' },
  { what: 'OIDC credential name', method: 'POST', path: `/applications/${app.id}/oidc-clients/${client.id}/credentials`, body: (n) => ({ name: n }), field: () => 'name' },
  { what: 'profile field name', method: 'PATCH', path: profilePath, body: (n) => ({ data: { [n]: 'v' } }), field: (n) => n, code: 'E_USER_UPDATE_FAILED' },
  { what: 'profile field name on /me', method: 'PATCH', path: `/me/applications/${app.id}/data`, bearer: true, body: (n) => ({ data: { [n]: 'v' } }), field: (n) => n, code: 'E_USER_UPDATE_FAILED' },
  { what: 'attribute key name', method: 'PATCH', path: profilePath, body: (n) => ({ attributes: { [`ns:${n}`]: ['v'] } }), field: (n) => `attributes.ns:${n}`, code: 'E_USER_UPDATE_FAILED' },
];

t.test('each name refuses each misleading character inside it: 400, the §7 body, and nothing changed', async (t) => {
  const before = storeDigest(server.deps.store);
  for (const c of cases) {
    for (const character of MISLEADING) {
      const name = `evil${character}txt.exe`;
      const res = await server.request(c.method, c.path, {
        body: c.body(name),
        ...(c.bearer ? { token } : c.admin ? { headers: { authorization: `Bearer ${admin}` } } : { app }),
      });
      const label = `${c.what} with ${hex(character)}`;
      t.equal(res.status, 400, label);
      t.match(res.body, { statusCode: 400, error: 'Bad Request', code: c.code ?? 'E_VALIDATION', message: String, messages: [String] }, label);
      t.same(Object.keys(res.body.field_errors ?? {}), [c.field(name)], `${label}: the field is named`);
    }
  }
  t.equal(storeDigest(server.deps.store), before, 'nothing changed');
});

t.test('free profile values and descriptions keep them: a user writes its own text', async (t) => {
  const value = `\u202Ertl\u2066x\u2069 a\u2028b`;
  const res = await server.request('PATCH', `/me/applications/${app.id}/data`, { token, body: { data: { first_name: value }, attributes: { 'ns:ok': [value] } } });
  t.equal(res.status, 200, res.body.code);
  t.equal(res.body.data.first_name, value);
  t.same(res.body.attributes['ns:ok'], [value]);
  const described = await server.request('POST', `/applications/${app.id}/oidc-clients`, { app, body: { name: 'Mobile', description: value } });
  t.equal(described.status, 200, described.body.code);
});

t.test('a field name or attribute key stored before the rule is kept, sent back as read, and removable', async (t) => {
  const field = 'a\u202Eb';
  const key = 'ns:a\u202Eb';
  const { runtime, users } = server.deps;
  const current = (await server.request('GET', profilePath, { app })).body;
  await runtime.run([userLock(app.id, userId)], (turn) => {
    users.update(turn, app.id, userId, { data: { ...current.data, [field]: 'old' }, attributes: { ...current.attributes, [key]: ['old'] } });
  });
  const merged = await server.request('PATCH', profilePath, { app, body: { data: { other: 'x' } } });
  t.equal(merged.status, 200, merged.body.code);
  t.equal(merged.body.data[field], 'old', 'kept by a write that does not name it');
  const echoed = await server.request('PUT', profilePath, { app, body: { data: merged.body.data, attributes: merged.body.attributes } });
  t.equal(echoed.status, 200, echoed.body.code);
  const removed = await server.request('PATCH', profilePath, { app, body: { data: { [field]: null } } });
  t.equal(removed.status, 200, removed.body.code);
  t.notOk(Object.hasOwn(removed.body.data, field), 'removed by null');
});

t.test('a group name stored before the rule is found by lookup_filter with its exact name', async (t) => {
  const name = 'evil\u202Etxt.exe';
  // Planted as a build before the rule stored it: the service takes what the schema checked.
  const { group: stored } = await new GroupService(server.deps.groups).create({ kind: 'app', appId: app.id }, { name, admission_policy: 'invite_only', meta: {} });
  const found = await server.request('GET', `/applications/${app.id}/groups?lookup_filter=${encodeURIComponent(`Nothing,${name}`)}`, { app });
  t.equal(found.status, 200, found.body.code);
  t.same(found.body.results.map((g: any) => g.id), [stored.context.id]);
  t.equal(found.body.results[0].name, name, 'shown as stored');
  const missing = await server.request('GET', `/applications/${app.id}/groups?lookup_filter=${encodeURIComponent('other\u202Ename')}`, { app });
  t.same(missing.body, { total_results: 0, results: [] }, 'a name holding one that no group has: an empty page');
});
