import t from 'tap';
import { startServer } from '../../helpers/server.js';
import { verifyStore } from '../../../src/verify/invariants.js';
import { allInvariants } from '../../../src/verify/all.js';
import { storeDigest } from '../../helpers/store-digest.js';
import { as, assertProfilesConsistent, groupOf, person, platform, profileGroups } from './helpers.js';
import { tokenFor } from '../../helpers/tokens.js';
import { manualClock } from '../../../src/lib/clock.js';

t.test('POST /me/groups makes the caller the active owner; GET shows it to members only', async (t) => {
  const server = await startServer(t);
  const ada = await person(server, 'ada@example.com');
  const eve = await person(server, 'eve@example.com');
  const res = await as(server, ada).post('/me/groups', { name: ' Crew ', admission_policy: 'open', meta: { color: 'red' } });
  t.equal(res.status, 200);
  const { group, member } = res.body;
  t.match(group, { name: 'Crew', admission_policy: 'open', meta: { color: 'red' }, member_count: 1, app_id: server.app.id });
  t.match(group.id, /^group_[0-9A-Z]{26}$/);
  t.equal(group.created_by, ada.userId);
  t.match(member, { user_id: ada.userId, group_id: group.id, roles: ['owner'], state: 'active', added_by: `user:${ada.userId}` });
  t.equal(member.profile.email, 'ada@example.com');

  const seen = await as(server, ada).get(`/me/groups/${group.id}`);
  t.same(seen.body, res.body, 'GET answers the same wrapper');
  const hidden = await as(server, eve).get(`/me/groups/${group.id}`);
  t.equal(hidden.status, 404);
  t.equal(hidden.body.code, 'E_GROUP_NOT_FOUND');
  await assertProfilesConsistent(t, server, [ada.userId, eve.userId]);
  t.same(profileGroups(server, eve.userId), []);
});

t.test('group bodies are validated', async (t) => {
  const server = await startServer(t);
  const ada = await person(server, 'ada@example.com');
  const cases: Array<[unknown, string]> = [
    [{}, 'name'],
    [{ name: '   ' }, 'name'],
    [{ name: 'x', admission_policy: 'closed' }, 'admission_policy'],
    [{ name: 'x', meta: 'no' }, 'meta'],
    [{ name: 'x', meta: [1] }, 'meta'],
    [[], 'body'],
    [{ name: 'x', meta: { big: 'x'.repeat(16 * 1024) } }, 'meta'],
  ];
  for (const [body, field] of cases) {
    const res = await as(server, ada).post('/me/groups', body);
    t.equal(res.status, 400, JSON.stringify(body).slice(0, 60));
    t.equal(res.body.code, 'E_VALIDATION');
    t.ok(res.body.field_errors[field], `field_errors names ${field}`);
    t.equal(res.body.messages[0], res.body.message, 'messages holds the message first (ADDENDUM §7: at least [message])');
    t.ok(res.body.messages.slice(1).some((m: string) => m.startsWith(`${field}: `)), 'then each field error');
  }
  const list = await platform(server).get('/groups');
  t.equal(list.body.total_results, 0, 'nothing was created');
});

t.test('only owners update or delete a group; PUT replaces it', async (t) => {
  const server = await startServer(t);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const { group } = await groupOf(server, ada);
  await platform(server).post(`/groups/${group.id}/members`, { user_id: bob.userId, roles: ['reader'] });

  const refused = await as(server, bob).put(`/me/groups/${group.id}`, { name: 'Mine' });
  t.equal(refused.status, 403);
  t.equal(refused.body.code, 'E_FORBIDDEN');
  t.equal((await as(server, bob).del(`/me/groups/${group.id}`)).status, 403);

  const updated = await as(server, ada).put(`/me/groups/${group.id}`, { name: 'Band', meta: { a: 1 } });
  t.equal(updated.status, 200);
  t.match(updated.body.group, { name: 'Band', meta: { a: 1 }, admission_policy: 'invite_only', updated_by: ada.userId });
  t.equal(updated.body.member.user_id, ada.userId);
  const byApp = await platform(server).put(`/groups/${group.id}`, { name: 'Orchestra', admission_policy: 'open' });
  t.match(byApp.body, { name: 'Orchestra', admission_policy: 'open', meta: {}, updated_by: `app:${server.app.id}` });
  await assertProfilesConsistent(t, server, [ada.userId, bob.userId]);

  t.equal((await platform(server).get(`/groups?lookup_filter=band`)).body.total_results, 0, 'the old name is unindexed');
  t.equal((await platform(server).get(`/groups?lookup_filter=ORCHESTRA`)).body.total_results, 1);
});

t.test('PUT without a name keeps the group\'s name (SPEC marks none required there); POST still needs one', async (t) => {
  const server = await startServer(t);
  const ada = await person(server, 'ada@example.com');
  const { group } = await groupOf(server, ada, 'Crew');
  await as(server, ada).put(`/me/groups/${group.id}`, { admission_policy: 'open', meta: { a: 1 } });

  const byOwner = await as(server, ada).put(`/me/groups/${group.id}`, { meta: { b: 2 } });
  t.equal(byOwner.status, 200);
  t.match(byOwner.body.group, { name: 'Crew', admission_policy: 'invite_only', meta: { b: 2 } }, 'policy and meta are still replaced');
  const byApp = await platform(server).put(`/groups/${group.id}`, {});
  t.equal(byApp.status, 200);
  t.match(byApp.body, { name: 'Crew', meta: {} });
  t.equal((await platform(server).get(`/groups?lookup_filter=crew`)).body.total_results, 1, 'the kept name stays indexed');
  await assertProfilesConsistent(t, server, [ada.userId]);

  for (const body of [{}, { meta: {} }]) {
    t.same((await as(server, ada).post('/me/groups', body)).body.field_errors, { name: ['is required'] }, `POST /me/groups ${JSON.stringify(body)}`);
    t.same((await platform(server).post('/groups', body)).body.field_errors, { name: ['is required'] }, `POST /groups ${JSON.stringify(body)}`);
  }
});

t.test('deleting a group removes its members, invites and profile pairs', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const { group } = await groupOf(server, ada);
  const other = await groupOf(server, bob, 'Other');
  await api.post(`/groups/${group.id}/members`, { user_id: bob.userId, roles: [] });
  const invited = await api.post(`/groups/${group.id}/invites`, { email: 'cy@example.com', roles: [] });
  const cy = invited.body.invitation.ensured_user_id;

  t.equal((await as(server, ada).del(`/me/groups/${group.id}`)).status, 204);
  t.equal((await api.get(`/groups/${group.id}`)).body.code, 'E_GROUP_NOT_FOUND');
  t.equal((await api.get(`/groups/${group.id}/members`)).status, 404);
  t.equal((await as(server, bob).get(`/me/groups/${group.id}`)).status, 404);
  t.same(profileGroups(server, ada.userId), []);
  t.same(profileGroups(server, cy), []);
  t.same(profileGroups(server, bob.userId).map((p) => p.group.id), [other.group.id], "bob's other group stays");
  const { runtime } = server.deps;
  t.equal(runtime.read('invite', [server.app.id, group.id, invited.body.invitation.id]), undefined);
  t.equal(runtime.read('member', [server.app.id, group.id, invited.body.invitation.id]), undefined);
  const list = await api.get('/groups');
  t.same(list.body.results.map((g: any) => g.id), [other.group.id]);
  t.equal(list.body.total_results, 1);

  t.same(verifyStore(server.deps, allInvariants).problems, [], 'no record still names the group, no entry or rendering is left');

  t.equal((await api.del(`/groups/${other.group.id}`)).status, 204, 'the platform deletes too');
  t.equal((await api.del(`/groups/${other.group.id}`)).status, 404);
  t.same(verifyStore(server.deps, allInvariants).problems, []);
});

t.test('platform groups: create answers the plain group; paging and lookup_filter', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const created = await api.post('/groups', { name: 'Alpha' });
  t.equal(created.status, 200);
  t.equal(created.body.member, undefined, 'a plain Group');
  t.equal(created.body.member_count, 0);
  t.equal(created.body.created_by, `app:${server.app.id}`);
  const ids = [created.body.id];
  for (const name of ['Beta', 'alpha', 'Gamma', 'Delta']) ids.push((await api.post('/groups', { name })).body.id);

  const first = await api.get('/groups?page_size=2');
  t.equal(first.body.total_results, 5);
  t.same(first.body.results.map((g: any) => g.id), ids.slice(0, 2));
  const second = await api.get(`/groups?page_size=2&after=${ids[1]}`);
  t.same(second.body.results.map((g: any) => g.id), ids.slice(2, 4));
  const last = await api.get(`/groups?page_size=2&after=${ids[3]}`);
  t.same(last.body.results.map((g: any) => g.id), ids.slice(4));
  t.equal((await api.get('/groups')).body.results.length, 5, 'default page size 20 holds all');

  const byName = await api.get('/groups?lookup_filter=ALPHA');
  t.same(byName.body.results.map((g: any) => g.id), [ids[0], ids[2]], 'names match case-insensitively');
  t.equal(byName.body.total_results, 2);
  const mixed = await api.get(`/groups?lookup_filter=${ids[4]},gamma,nothing&page_size=1`);
  t.equal(mixed.body.total_results, 2);
  t.same(mixed.body.results.map((g: any) => g.id), [ids[3]]);
  const mixedNext = await api.get(`/groups?lookup_filter=${ids[4]},gamma&page_size=1&after=${ids[3]}`);
  t.same(mixedNext.body.results.map((g: any) => g.id), [ids[4]]);

  for (const query of ['page_size=0', 'page_size=101', 'page_size=ten', 'after=', 'after=garbage', 'after=zzz', 'page_size=2&page_size=3', 'lookup_filter=', 'sort=up']) {
    const res = await api.get(`/groups?${query}`);
    t.equal(res.status, 400, query);
    t.equal(res.body.code, 'E_VALIDATION');
  }
  t.equal((await api.get('/groups/group_nope')).body.code, 'E_GROUP_NOT_FOUND');
  t.equal((await api.get('/groups/group_01JD0000000000000000000000')).body.code, 'E_GROUP_NOT_FOUND');
  const huge = await api.del(`/groups/${'x'.repeat(5000)}/invites/${'y'.repeat(5000)}`);
  t.equal(huge.status, 404, 'an ID longer than any key is simply not found');
  t.equal((await api.get(`/groups?lookup_filter=${'z'.repeat(5000)}`)).status, 400);
});

t.test('a group name with a comma is found when lookup_filter asks for it whole', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ids: Record<string, string> = {};
  for (const name of ['Sales, EMEA', 'Sales', 'EMEA', 'Other']) ids[name] = (await api.post('/groups', { name })).body.id;
  const found = async (filter: string) => {
    const res = await api.get(`/groups?lookup_filter=${encodeURIComponent(filter)}`);
    t.equal(res.status, 200, filter);
    return res.body.results.map((g: any) => g.id).sort();
  };
  t.same(await found(' sales, emea '), [ids['Sales, EMEA'], ids.Sales, ids.EMEA].sort(), 'the whole name, and each listed value');
  t.same(await found('Sales,Other'), [ids.Sales, ids.Other].sort(), 'a whole text that names no group adds nothing');
  t.same(await found('Sales, EMEA, Other'), [ids.Sales, ids.EMEA, ids.Other].sort(), 'only the whole text, not a part of the list');
  const members = await api.get(`/groups/${ids.Sales}/members?lookup_filter=${encodeURIComponent('a@example.com,b@example.com')}`);
  t.equal(members.status, 200, 'member lists take comma lists as before');
});

t.test('a lookup_filter value no group or member could match is 400 on lookup_filter; a well-formed one that matches nothing, an empty page', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const { group } = await groupOf(server, ada, 'Crew');
  const get = async (list: string, filter: string) => api.get(`${list}?lookup_filter=${encodeURIComponent(filter)}`);
  const members = `/groups/${group.id}/members`;
  for (const [list, filter] of [
    ['/groups', 'x'.repeat(201)],
    ['/groups', `${'x'.repeat(150)},,${'y'.repeat(60)}`],
    [members, 'ada@example.com,,bob@example.com'],
    [members, 'a b'],
    [members, `${ada.userId},x\u007f`],
    [members, 'x'.repeat(129)],
  ]) {
    const res = await get(list, filter);
    t.equal(res.status, 400, `${list} ${JSON.stringify(filter)}`);
    t.same(Object.keys(res.body.field_errors ?? {}), ['lookup_filter'], `${list} ${JSON.stringify(filter)} names lookup_filter`);
  }
  for (const [list, filter] of [
    ['/groups', 'Nobody,group_01JD0000000000000000000000'],
    ['/groups', 'a,,b'],
    // A name stored before the rule of names holds such characters: a lookup is held to a name's shape alone.
    ['/groups', 'Nobody,a\u0001b'],
    ['/groups', 'Nobody,a\u202eb'],
    [members, 'nobody,nobody@example.com,+1 555 000 9999'],
  ]) {
    t.same((await get(list, filter)).body, { total_results: 0, results: [] }, `${list} ${JSON.stringify(filter)}: an empty page`);
  }
  t.same((await get('/groups', 'x'.repeat(201))).body.field_errors, { lookup_filter: ['each lookup_filter value is a group ID or name: at most 200 characters'] }, 'the refusal words the rule');
  t.equal((await get('/groups', `${'x'.repeat(150)},,Crew`)).body.total_results, 1, 'a list of names may hold an empty entry while the whole could be one name');
  t.equal((await get(members, ` ${ada.userId} `)).body.total_results, 1);
});

t.test('a group name is found however its accents are encoded, as an address is: lookup_filter compares names in NFC', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const composed = 'Caf\u00e9 Cr\u00e8me';
  const decomposed = composed.normalize('NFD');
  const ids = [];
  for (const name of [composed, decomposed]) ids.push((await api.post('/groups', { name })).body.id);
  for (const form of [composed, decomposed, decomposed.toUpperCase()]) {
    const res = await api.get(`/groups?lookup_filter=${encodeURIComponent(form)}`);
    t.same(res.body.results.map((g: any) => g.id), ids, `${JSON.stringify(form)} finds both groups`);
    t.equal(res.body.total_results, 2);
  }
  t.same((await api.get(`/groups/${ids[1]}`)).body.name, decomposed, 'a name is shown as it was written');
  await api.put(`/groups/${ids[1]}`, { name: 'Tea' });
  t.same((await api.get(`/groups?lookup_filter=${encodeURIComponent(composed)}`)).body.results.map((g: any) => g.id), [ids[0]], 'a renamed group is no longer found by its old name');
  t.same(verifyStore(server.deps, allInvariants).problems, [], 'the name index verifies');
});

t.test('GET /me/groups lists the caller groups of the token app, paged', async (t) => {
  const server = await startServer(t);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const ids = [];
  for (const name of ['One', 'Two', 'Three']) ids.push((await groupOf(server, ada, name)).group.id);
  await groupOf(server, bob, 'Not mine');
  const invited = await platform(server).post(`/groups/${ids[0]}/invites`, { user_id: bob.userId, roles: [] });
  t.equal(invited.status, 200);

  const page = await as(server, ada).get('/me/groups?page_size=2');
  t.equal(page.body.total_results, 3);
  t.same(page.body.results.map((p: any) => p.group.id), ids.slice(0, 2));
  t.ok(page.body.results.every((p: any) => p.member.user_id === ada.userId && p.member.profile.email === 'ada@example.com'));
  const next = await as(server, ada).get(`/me/groups?page_size=2&after=${ids[1]}`);
  t.same(next.body.results.map((p: any) => p.group.id), [ids[2]]);

  const bobs = await as(server, bob).get('/me/groups');
  t.equal(bobs.body.total_results, 2, 'a pending invite shows the group to its user');
  t.same(bobs.body.results.map((p: any) => p.member.state).sort(), ['active', 'invite_pending']);
  t.equal((await as(server, ada).get('/me/groups?page_size=500')).status, 400);
});

t.test('GET /me/groups answers each pair exactly as GET /me/groups/{id} does, paged', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  t.equal((await api.patch(`/users/${ada.userId}/data`, { data: { first_name: 'Ada', last_name: 'Lovelace' } })).status, 200);
  const owned = (await as(server, ada).post('/me/groups', { name: 'Owned', meta: { color: 'red' } })).body.group;
  const byApp = (await api.post('/groups', { name: 'By app', admission_policy: 'open' })).body;
  t.equal((await api.post(`/groups/${byApp.id}/members`, { user_id: ada.userId, roles: ['reader'] })).status, 200);
  const pending = (await groupOf(server, bob, 'Pending')).group;
  t.equal((await api.post(`/groups/${pending.id}/invites`, { user_id: ada.userId, roles: ['editor'] })).status, 200);
  const declined = (await groupOf(server, bob, 'Declined')).group;
  const invite = (await api.post(`/groups/${declined.id}/invites`, { user_id: ada.userId, roles: [] })).body.invitation;
  t.equal((await as(server, ada).post(`/me/groups/${declined.id}/invites/${invite.id}/reject`)).status, 200);
  t.equal((await as(server, ada).put(`/me/groups/${owned.id}`, { name: 'Renamed', meta: { color: 'blue' } })).status, 200);
  const ids = [owned.id, byApp.id, pending.id, declined.id];

  const one = async (id: string) => (await as(server, ada).get(`/me/groups/${id}`)).text;
  const singles = await Promise.all(ids.map(one));
  const listed = await as(server, ada).get('/me/groups');
  t.equal(listed.text, `{"total_results":4,"results":[${singles.join(',')}]}`, 'byte for byte the single reads, in order');
  t.same(listed.body.results.map((p: any) => p.member.state), ['active', 'active', 'invite_pending', 'invite_rejected']);
  t.same(listed.body.results[0].member.profile, { user_id: ada.userId, email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' });

  const second = await as(server, ada).get(`/me/groups?page_size=2&after=${ids[1]}`);
  t.equal(second.text, `{"total_results":4,"results":[${singles.slice(2).join(',')}]}`);
  const past = await as(server, ada).get(`/me/groups?after=${ids[3]}`);
  t.equal(past.text, '{"total_results":4,"results":[]}');
  const none = await as(server, await person(server, 'eve@example.com')).get('/me/groups');
  t.equal(none.text, '{"total_results":0,"results":[]}');
});

t.test('PUT /me/groups/{id} answers the group and member the update left, as GET then shows them', async (t) => {
  const server = await startServer(t);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const { group } = await groupOf(server, ada);
  await platform(server).post(`/groups/${group.id}/members`, { user_id: bob.userId, roles: ['owner'] });
  for (const [who, body] of [
    [ada, { name: 'Band', meta: { a: 1 } }],
    [bob, { name: 'Orchestra', admission_policy: 'open' }],
  ] as const) {
    const updated = await as(server, who).put(`/me/groups/${group.id}`, body);
    t.equal(updated.status, 200);
    t.equal(updated.body.member.user_id, who.userId, 'the caller’s own member');
    t.equal(updated.body.member.profile.user_id, who.userId);
    t.equal(updated.text, (await as(server, who).get(`/me/groups/${group.id}`)).text, 'the same bytes as a read after it');
  }
});

t.test('group routes that take no query refuse one (400) and change nothing', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const { group } = await groupOf(server, ada);
  t.equal((await api.del(`/groups/${group.id}?dry_run=true`)).status, 400);
  t.equal((await api.get(`/groups/${group.id}`)).status, 200, 'the group is still there');
  t.equal((await server.request('POST', '/me/groups?x=1', { token: ada.token, body: { name: 'Typo' } })).status, 400);
  t.equal((await as(server, ada).get('/me/groups')).body.total_results, 1, 'no group was made');
  const bob = await person(server, 'bob@example.com');
  t.equal((await api.post(`/groups/${group.id}/members?x=1`, { user_id: bob.userId, roles: [] })).status, 400);
  t.equal((await api.get(`/groups/${group.id}/members`)).body.total_results, 1);
});

t.test('every group list refuses a query parameter named __proto__ (400 naming it), as any unknown one', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const { group } = await groupOf(server, ada);
  const lists = [
    ['/me/groups', () => as(server, ada).get('/me/groups?__proto__=1')],
    ['/me members', () => as(server, ada).get(`/me/groups/${group.id}/members?__proto__=1`)],
    ['/me invites', () => as(server, ada).get(`/me/groups/${group.id}/invites?__proto__=1`)],
    ['groups', () => api.get('/groups?__proto__=1')],
    ['members', () => api.get(`/groups/${group.id}/members?__proto__=1`)],
    ['invites', () => api.get(`/groups/${group.id}/invites?__proto__=1`)],
  ] as const;
  for (const [label, list] of lists) {
    const res = await list();
    t.equal(res.status, 400, label);
    t.equal(res.body.code, 'E_VALIDATION', label);
    t.ok(Object.hasOwn(res.body.field_errors ?? {}, '__proto__'), `${label}: field_errors names __proto__`);
  }
});

t.test('limits and types of group, member and invite fields are told in plain words, not the validator\'s', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const { group } = await groupOf(server, await person(server, 'ada@example.com'));
  const bob = await person(server, 'bob@example.com');
  const cases: Array<[string, unknown, string, string]> = [
    ['/groups', { name: 'x'.repeat(201) }, 'name', 'name is at most 200 characters'],
    [`/groups/${group.id}/members`, { user_id: bob.userId, roles: ['r'.repeat(65)] }, 'roles[0]', 'a role is at most 64 characters'],
    [`/groups/${group.id}/members`, { user_id: bob.userId, roles: [5] }, 'roles[0]', 'a role is a string'],
    [`/groups/${group.id}/members`, { user_id: 5, roles: [] }, 'user_id', 'user_id must be a string'],
    [`/groups/${group.id}/invites`, { email: `${'a'.repeat(250)}@x.io`, roles: [] }, 'email', 'email must be an email address (text around one @, without spaces, commas, control characters, bidirectional controls, line separators or invisible characters) of at most 254 characters'],
    [`/groups/${group.id}/invites`, { phone: 15550100, roles: [] }, 'phone', 'phone must be a string'],
    [`/groups/${group.id}/invites`, { user_id: bob.userId, roles: [], redirect_url: `/${'x'.repeat(2048)}` }, 'redirect_url', 'redirect_url is at most 2048 characters'],
    [`/groups/${group.id}/invites`, { user_id: bob.userId, roles: [], redirect_url: 'https://ada@app.example/in' }, 'redirect_url', 'redirect_url must not hold a user name or password (user@host)'],
    [`/groups/${group.id}/invites`, { user_id: bob.userId, roles: [], app_variant_id: '' }, 'app_variant_id', 'app_variant_id is 1 to 128 characters of [A-Za-z0-9_.:@|+-]'],
    // The rule of an OIDC credential's app_variant_id, which names the same variants.
    [`/groups/${group.id}/invites`, { user_id: bob.userId, roles: [], app_variant_id: 'has space' }, 'app_variant_id', 'app_variant_id is 1 to 128 characters of [A-Za-z0-9_.:@|+-]'],
    [`/groups/${group.id}/invites`, { user_id: bob.userId, roles: [], app_variant_id: 'web\u0085' }, 'app_variant_id', 'app_variant_id is 1 to 128 characters of [A-Za-z0-9_.:@|+-]'],
  ];
  for (const [path, body, field, message] of cases) {
    const res = await api.post(path, body);
    t.equal(res.status, 400, `${path} ${field}`);
    t.same(res.body.field_errors?.[field], [message], field);
  }
});

t.test('names and roles are counted in characters as people count them: an emoji is one, though JavaScript counts two', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const { group } = await groupOf(server, await person(server, 'ada@example.com'));
  const bob = await person(server, 'bob@example.com');
  const made = await api.post('/groups', { name: '😀'.repeat(200) });
  t.equal(made.status, 200, 'a name of 200 emoji');
  t.equal(made.body.name, '😀'.repeat(200));
  t.same((await api.post('/groups', { name: '😀'.repeat(201) })).body.field_errors, { name: ['name is at most 200 characters'] }, 'and not 201');
  const member = await api.post(`/groups/${group.id}/members`, { user_id: bob.userId, roles: ['🎉'.repeat(64)] });
  t.equal(member.status, 200, 'a role of 64 emoji');
  t.same(member.body.roles, ['🎉'.repeat(64)]);
  const other = await person(server, 'cy@example.com');
  t.same((await api.post(`/groups/${group.id}/members`, { user_id: other.userId, roles: ['🎉'.repeat(65)] })).body.field_errors, { 'roles[0]': ['a role is at most 64 characters'] });
  t.equal((await api.get(`/groups?lookup_filter=${encodeURIComponent('😀'.repeat(200))}`)).body.total_results, 1, 'and found by it');

  // U+1D160 folds (NFC) to three characters of 4 bytes each: 200 of them would make a key past LMDB's.
  const before = storeDigest(server.deps.store);
  const folded = await api.post('/groups', { name: '\u{1D160}'.repeat(200) });
  t.equal(folded.status, 400, 'a name whose folded key the index cannot hold');
  t.same(folded.body.field_errors, { name: ['name is too long once its letter case and Unicode form are folded for lookups (at most 1 200 bytes of UTF-8)'] });
  t.equal(storeDigest(server.deps.store), before, 'nothing made');
  t.equal((await api.put(`/groups/${group.id}`, { name: '\u{1D160}'.repeat(200) })).status, 400, 'nor renamed to');
  t.ok((await api.post('/groups', { name: '\u{1D160}'.repeat(100) })).status === 200, 'half as many fit');
  const lookup = await api.get(`/groups?lookup_filter=${encodeURIComponent('\u{1D160}'.repeat(200))}`);
  t.same([lookup.status, lookup.body.total_results], [200, 0], 'looked up, such a name finds nothing (no 500)');
});

t.test('a role holds no control characters, as names do: 400 on that role, and nothing changes', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const { group, member } = await groupOf(server, ada);
  const bob = await person(server, 'bob@example.com');
  const invite = (await api.post(`/groups/${group.id}/invites`, { user_id: bob.userId, roles: [] })).body.invitation;
  const before = storeDigest(server.deps.store);
  for (const role of ['a\u0000', 'a\u0007b', 'x\u007f', 'x\u0085y']) {
    for (const [label, res] of [
      ['member create', await api.post(`/groups/${group.id}/members`, { email: 'cy@example.com', roles: ['ok', role] })],
      ['member PUT on /me', await as(server, ada).put(`/me/groups/${group.id}/members/${member.id}`, { roles: ['owner', role] })],
      ['invite create', await api.post(`/groups/${group.id}/invites`, { email: 'dee@example.com', roles: ['ok', role] })],
      ['invite PUT', await api.put(`/groups/${group.id}/invites/${invite.id}`, { roles: ['ok', role] })],
    ] as const) {
      t.equal(res.status, 400, `${label} ${JSON.stringify(role)}`);
      t.equal(res.body.code, 'E_VALIDATION');
      t.same(res.body.field_errors, { 'roles[1]': ['must not contain control characters, bidirectional controls or line separators'] });
    }
  }
  t.equal(storeDigest(server.deps.store), before, 'no user, member or invite was made or changed');
});

t.test('the 50-roles cap counts roles after duplicates are dropped', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const { group, member } = await groupOf(server, ada);
  const fifty = ['owner', ...Array.from({ length: 49 }, (_, i) => `role${i}`)];
  const sent = [...fifty, 'role0', ' role1 '];
  const kept = (await api.post(`/groups/${group.id}/members`, { email: 'bob@example.com', roles: sent })).body;
  t.same(kept.roles, fifty, 'member create: 52 entries that reduce to 50 are taken, without the duplicates');
  const put = await as(server, ada).put(`/me/groups/${group.id}/members/${member.id}`, { roles: sent });
  t.equal(put.status, 200, 'member PUT');
  t.same(put.body.roles, fifty);
  const invite = await api.post(`/groups/${group.id}/invites`, { email: 'cy@example.com', roles: sent });
  t.equal(invite.status, 200, 'invite create');
  t.same(invite.body.invitation.roles, fifty);
  const invitePut = await api.put(`/groups/${group.id}/invites/${invite.body.invitation.id}`, { roles: sent });
  t.equal(invitePut.status, 200, 'invite PUT');
  t.same(invitePut.body.roles, fifty);

  const tooMany = await api.post(`/groups/${group.id}/members`, { email: 'dee@example.com', roles: [...sent, 'role49'] });
  t.equal(tooMany.status, 400, '51 distinct roles are still refused');
  t.same(tooMany.body.field_errors, { roles: ['at most 50 roles'] });
});

// The first member got `owner` added past the 50 roles a body may give: it held 51, and a PUT sending
// its roles back was refused.
t.test('the owner role the first member gets counts toward its 50 roles: past them the create is 400 and makes nothing', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const bob = await person(server, 'bob@example.com');
  const roles = (count: number) => Array.from({ length: count }, (_, i) => `role${i}`);
  const group = (await api.post('/groups', { name: 'Crew' })).body;
  const expected = ['at most 50 roles, owner included: the first member of a group, and its invite, also hold owner'];

  const member = await api.post(`/groups/${group.id}/members`, { user_id: bob.userId, roles: roles(50) });
  t.equal(member.status, 400);
  t.same(member.body.field_errors, { roles: expected });
  const invite = await api.post(`/groups/${group.id}/invites`, { user_id: bob.userId, roles: roles(50) });
  t.equal(invite.status, 400);
  t.same(invite.body.field_errors, { roles: expected });
  t.equal((await api.get(`/groups/${group.id}/members`)).body.total_results, 0, 'no member made');
  t.equal((await api.get(`/groups/${group.id}/invites`)).body.total_results, 0, 'no invite made');

  const made = await api.post(`/groups/${group.id}/members`, { user_id: bob.userId, roles: roles(49) });
  t.equal(made.status, 200);
  t.equal(made.body.roles.length, 50);
  const sentBack = await api.put(`/groups/${group.id}/members/${made.body.id}`, { roles: made.body.roles });
  t.equal(sentBack.status, 200, 'its roles sent back pass');
  t.same(sentBack.body.roles, made.body.roles);
  t.equal((await api.post(`/groups/${group.id}/members`, { user_id: (await person(server, 'cy@example.com')).userId, roles: roles(50) })).status, 200, 'a later member holds 50 of its own');
});

t.test("SPEC's Group, Group member and Group invite objects: every field with its type, IDs as ADDENDUM §1 has them, times in ISO 8601", async (t) => {
  const clock = manualClock(Date.parse('2026-05-01T08:00:00.000Z'));
  const server = await startServer(t, { clock });
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const ulid = (prefix: string) => new RegExp(`^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`);

  clock.set(Date.parse('2026-05-01T08:00:01.000Z'));
  const wrapper = (await as(server, ada).post('/me/groups', { name: 'Crew', admission_policy: 'open', meta: { color: 'red' } })).body;
  t.strictSame(Object.keys(wrapper).sort(), ['group', 'member'], 'the wrapper holds a group and a member');
  const { group, member } = wrapper;
  t.match(group.id, ulid('group'));
  t.strictSame(group, {
    id: group.id, name: 'Crew', member_count: 1, app_id: server.app.id, admission_policy: 'open', meta: { color: 'red' },
    created_at: '2026-05-01T08:00:01.000Z', updated_at: '2026-05-01T08:00:01.000Z', created_by: ada.userId, updated_by: ada.userId,
  });
  t.match(member.id, ulid('member'));
  t.strictSame(member, {
    id: member.id, user_id: ada.userId, group_id: group.id, roles: ['owner'], state: 'active', added_by: `user:${ada.userId}`,
    created_at: '2026-05-01T08:00:01.000Z', updated_at: '2026-05-01T08:00:01.000Z', profile: { user_id: ada.userId, email: 'ada@example.com' },
  });

  clock.set(Date.parse('2026-05-01T08:00:02.000Z'));
  const added = (await api.post(`/groups/${group.id}/members`, { user_id: bob.userId, roles: ['editor'] })).body;
  t.match(added.id, ulid('member'));
  t.strictSame(added, {
    id: added.id, user_id: bob.userId, group_id: group.id, roles: ['editor'], state: 'active', added_by: `app:${server.app.id}`,
    created_at: '2026-05-01T08:00:02.000Z', updated_at: '2026-05-01T08:00:02.000Z', profile: { user_id: bob.userId, email: 'bob@example.com' },
  });

  clock.set(Date.parse('2026-05-01T08:00:03.000Z'));
  const made = (await api.post(`/groups/${group.id}/invites`, { phone: '+15550100', roles: ['reader'], redirect_url: '/welcome', app_variant_id: 'web' })).body;
  t.strictSame(Object.keys(made).sort(), ['invitation', 'link']);
  t.match(made.link, /^http:\/\/svc\.test\/hub\/auth\/magic\/[A-Za-z0-9_-]{22,}$/);
  const { invitation } = made;
  const invitedId = invitation.ensured_user_id;
  t.match(invitation.id, ulid('invite'));
  t.match(invitedId, ulid('user'));
  t.strictSame(invitation, {
    id: invitation.id, group_id: group.id, roles: ['reader'], state: 'pending', phone: '+15550100', user_lookup_value: '+15550100',
    redirect_url: '/welcome', app_variant_id: 'web', created_at: '2026-05-01T08:00:03.000Z', created_by: `app:${server.app.id}`,
    ensured_user_id: invitedId,
  });
  const pending = (await api.get(`/groups/${group.id}/members?lookup_filter=${invitedId}`)).body.results[0];
  t.match(pending, { user_id: invitedId, state: 'invite_pending', roles: ['reader'], invited_by: `app:${server.app.id}` });
  t.equal(pending.added_by, undefined, 'a member made by an invite was invited, not added');

  const invited = await tokenFor(server, { user_id: invitedId });
  clock.set(Date.parse('2026-05-01T08:00:04.000Z'));
  t.equal((await as(server, invited).post(`/me/groups/${group.id}/invites/${invitation.id}/accept`)).status, 200);
  const accepted = (await api.get(`/groups/${group.id}/invites/${invitation.id}`)).body;
  t.strictSame(accepted, { ...invitation, state: 'accepted', accepted_by: invitedId });
  const listed = (await api.get(`/groups/${group.id}/invites`)).body;
  t.strictSame(listed, { total_results: 1, results: [accepted] }, 'a list is the paged envelope of the same objects');
});

t.test('every group list pages 20 by default and at most 100 (ADDENDUM §5): past 20 items a default page holds 20, the total counts them all', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const { group } = await groupOf(server, ada);
  for (let i = 0; i < 21; i++) {
    if (i > 0) await groupOf(server, ada, `Crew ${i}`);
    // Each invite makes its user's pending member too.
    t.equal((await api.post(`/groups/${group.id}/invites`, { email: `invitee${i}@example.com`, roles: [] })).status, 200);
  }
  const lists: Array<[string, (query: string) => Promise<any>, number]> = [
    ['GET /applications/{app}/groups', (query) => api.get(`/groups${query}`), 21],
    ['GET /me/groups', (query) => as(server, ada).get(`/me/groups${query}`), 21],
    ['GET …/members', (query) => api.get(`/groups/${group.id}/members${query}`), 22],
    ['GET …/invites', (query) => api.get(`/groups/${group.id}/invites${query}`), 21],
  ];
  for (const [label, get, total] of lists) {
    const res = await get('');
    t.equal(res.status, 200, label);
    t.equal(res.body.total_results, total, `${label}: the total counts every item`);
    t.equal(res.body.results.length, 20, `${label}: a default page holds 20`);
    t.equal((await get('?page_size=100')).body.results.length, total, `${label}: page_size=100 holds them all`);
    const over = await get('?page_size=101');
    t.equal(over.status, 400, `${label}: page_size=101 is refused`);
    t.same([over.body.code, Object.keys(over.body.field_errors)], ['E_VALIDATION', ['page_size']]);
  }
});
