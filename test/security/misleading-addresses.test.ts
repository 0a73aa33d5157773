import t from 'tap';
import { startServer } from '../helpers/server.js';
import { tokenFor } from '../helpers/tokens.js';
import { storeDigest } from '../helpers/store-digest.js';
import { userLock } from '../../src/features/users/directory.js';

// Addresses are shown to people (an invite's `user_lookup_value` to group owners, member profiles), so
// the address rule refuses the characters names refuse (docs/API.md): `ceo\u202Egro.live@evil.example`
// shows as `ceoelpmaxe.live@evil.org`. Phone numbers (digits, spaces and `().-`) never held one. (No answer holding U+2028 goes into an assertion's message: tap reads it as a line end.)
// Nor, unlike names, the invisible ones (Default_Ignorable_Code_Point): `ceo\u200B@example.com` shows as `ceo@example.com`.
// A lookup_filter value only names an address, so it is held to the shape alone: one stored before these rules is found by it.

const MISLEADING = ['\u061C', '\u200E', '\u200F', '\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069', '\u2028', '\u2029', '\u0085'];
const INVISIBLE = ['\u00AD', '\u034F', '\u180E', '\u200B', '\u200C', '\u200D', '\u2060', '\u2064', '\uFE0F', '\uFEFF', '\u3164'];
const hex = (c: string) => `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

const server = await startServer(t);
const { app } = server;
const owner = await tokenFor(server, { email: 'owner@example.com' });
const invited = await tokenFor(server, { user_id: 'invited' });
const group = (await server.request('POST', '/me/groups', { token: owner.token, body: { name: 'Sales' } })).body.group;
const pending = (await server.request('POST', `/applications/${app.id}/groups/${group.id}/invites`, { app, body: { user_id: invited.userId, roles: [] } })).body.invitation;
const appPath = `/applications/${app.id}`;

type Case = { what: string; method: string; path: (address: string) => string; body?: (address: string) => unknown; field: string; code: string; bearer?: boolean };

const cases: Case[] = [
  { what: 'profile PUT', method: 'PUT', path: () => `${appPath}/users/${owner.userId}/data`, body: (a) => ({ data: { email: a } }), field: 'email', code: 'E_USER_UPDATE_FAILED' },
  { what: 'profile PATCH on /me', method: 'PATCH', path: () => `/me${appPath}/data`, bearer: true, body: (a) => ({ data: { email: a } }), field: 'email', code: 'E_USER_UPDATE_FAILED' },
  { what: 'field PUT', method: 'PUT', path: () => `${appPath}/users/${owner.userId}/data/fields/email`, body: (a) => ({ value: a }), field: 'email', code: 'E_USER_UPDATE_FAILED' },
  { what: 'magic link', method: 'POST', path: () => '/hub/auth/magic', body: (a) => ({ verification_type: 'email', data: { email: a } }), field: 'data.email', code: 'E_VALIDATION' },
  { what: 'member', method: 'POST', path: () => `${appPath}/groups/${group.id}/members`, body: (a) => ({ email: a, roles: [] }), field: 'email', code: 'E_VALIDATION' },
  { what: 'member on /me', method: 'POST', path: () => `/me/groups/${group.id}/members`, bearer: true, body: (a) => ({ email: a, roles: [] }), field: 'email', code: 'E_VALIDATION' },
  { what: 'invite', method: 'POST', path: () => `${appPath}/groups/${group.id}/invites`, body: (a) => ({ email: a, roles: [] }), field: 'email', code: 'E_VALIDATION' },
  { what: 'invite on /me', method: 'POST', path: () => `/me/groups/${group.id}/invites`, bearer: true, body: (a) => ({ email: a, roles: [] }), field: 'email', code: 'E_VALIDATION' },
  { what: 'invite PUT', method: 'PUT', path: () => `${appPath}/groups/${group.id}/invites/${pending.id}`, body: (a) => ({ email: a, roles: [] }), field: 'email', code: 'E_VALIDATION' },
];

t.test('an email address holding a misleading character is refused wherever one is taken: 400 on its field, nothing changed', async (t) => {
  const before = storeDigest(server.deps.store);
  for (const c of cases) {
    for (const character of [...MISLEADING, ...INVISIBLE]) {
      const address = `ceo${character}gro.live@evil.example`;
      const res = await server.request(c.method, c.path(address), { ...(c.body ? { body: c.body(address) } : {}), ...(c.bearer ? { token: owner.token } : { app }) });
      const label = `${c.what} with ${hex(character)}`;
      t.equal(res.status, 400, label);
      t.match(res.body, { statusCode: 400, error: 'Bad Request', code: c.code, message: String, messages: [String] }, label);
      t.same(Object.keys(res.body.field_errors ?? {}), [c.field], `${label}: the field is named`);
    }
  }
  t.equal(storeDigest(server.deps.store), before, 'nothing changed');
});

const storedBefore = [
  { what: 'a bidirectional control', stored: 'ceo\u202Egro.live@evil.example', holderId: 'holder' },
  { what: 'an invisible character', stored: 'ceo\u200B@example.com', holderId: 'invisible-holder' },
];

for (const { what, stored, holderId } of storedBefore) {
  t.test(`an address holding ${what} stored before the rule is read, kept by writes that do not change it, and found by lookup_filter and id_filter`, async (t) => {
    const holder = await tokenFor(server, { user_id: holderId });
    const path = `${appPath}/users/${holderId}/data`;
    const { runtime, users } = server.deps;
    const current = (await server.request('GET', path, { app })).body;
    await runtime.run([userLock(app.id, holderId)], (turn) => {
      users.update(turn, app.id, holderId, { data: { ...current.data, email: stored }, attributes: current.attributes });
    });

    const read = await server.request('GET', path, { app });
    t.equal(read.body.data.email, stored, 'read as stored');
    const merged = await server.request('PATCH', path, { app, body: { data: { last_name: 'Build' } } });
    t.equal(merged.status, 200, merged.body.code);
    t.equal(merged.body.data.email, stored, 'kept by a merge that does not name it');
    const echoed = await server.request('PUT', path, { app, body: { data: merged.body.data } });
    t.equal(echoed.status, 200, echoed.body.code);
    t.equal(echoed.body.data.email, stored, 'sent back unchanged, it passes');
    const field = await server.request('PUT', `${path}/fields/email`, { app, body: { value: stored } });
    t.equal(field.status, 200, field.body.code);
    const mine = await server.request('PATCH', `/me${appPath}/data`, { token: holder.token, body: { data: { first_name: 'New', email: stored } } });
    t.equal(mine.status, 200, mine.body.code);
    t.equal(mine.body.data.email, stored, 'on /me too');

    const looked = await server.request('GET', `${appPath}/users/data?lookup_filter=${encodeURIComponent(`ok@example.com,${stored}`)}`, { app });
    t.equal(looked.status, 200, looked.body.code);
    t.same(looked.body.results.map((user: any) => user.data.email), [stored], 'lookup_filter finds it by its exact value');
    await server.request('POST', `${appPath}/groups/${group.id}/members`, { app, body: { user_id: holderId, roles: [] } });
    const members = await server.request('GET', `${appPath}/groups/${group.id}/members?lookup_filter=${encodeURIComponent(stored)}`, { app });
    t.equal(members.status, 200, members.body.code);
    t.same(members.body.results.map((member: any) => member.user_id), [holderId], 'so does a member list');
    const listed = await server.request('GET', `${appPath}/users/data?id_filter=${holderId}`, { app });
    t.equal(listed.status, 200);
    t.same(listed.body.results.map((user: any) => user.data.email), [stored], 'id_filter finds it');

    const changed = await server.request('PATCH', path, { app, body: { data: { email: `new${stored}` } } });
    t.equal(changed.status, 400, 'a changed value is held to the rule');
    t.same(Object.keys(changed.body.field_errors), ['email']);
  });
}
