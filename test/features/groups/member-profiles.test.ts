import t, { type Test } from 'tap';
import { startServer, type TestServer } from '../../helpers/server.js';
import { as, groupOf, person, platform } from './helpers.js';

/** Eight fields of 60 000 characters: about half a megabyte of `data` beside the member card's fields. */
const bulk = () => Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`bulk_${i}`, String.fromCharCode(97 + i).repeat(60_000)]));

/** A member's `profile` as SPEC shows it: the user's ID, then whichever of the three fields `data` holds. */
function expectedProfile(userId: string, data: Record<string, unknown>) {
  const profile: Record<string, unknown> = { user_id: userId };
  for (const field of ['email', 'first_name', 'last_name']) if (Object.hasOwn(data, field)) profile[field] = data[field];
  return profile;
}

/** Counts calls of `ProfileViews.storedUser`, the read that parses a user's whole platform body. */
function countStoredUserReads(t: Test, server: TestServer): { calls: number } {
  const { profiles } = server.deps;
  const counter = { calls: 0 };
  const storedUser = profiles.storedUser;
  profiles.storedUser = (...args) => {
    counter.calls++;
    return storedUser.apply(profiles, args);
  };
  t.teardown(() => {
    profiles.storedUser = storedUser;
  });
  return counter;
}

t.test("member profiles of users with large profiles read as before, without parsing any user's whole body", async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const group = (await api.post('/groups', { name: 'Crew' })).body;
  const datas: Array<Record<string, unknown>> = [
    { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' },
    { email: 'bob@example.com' },
    { last_name: 'Ünsal "quoted" \u2028', first_name: 'Cy' },
    {},
    { first_name: 'Zoë 😀', email: 'zoe@example.com', last_name: 'back\\slash\ttab' },
  ];
  const expected = [];
  for (const [index, fields] of datas.entries()) {
    const userId = `user_${index}`;
    const put = await api.put(`/users/${userId}/data`, { data: { ...bulk(), ...fields } });
    t.equal(put.status, 200, `${userId} stored`);
    const added = await api.post(`/groups/${group.id}/members`, { user_id: userId, roles: [] });
    t.equal(added.status, 200);
    expected.push(expectedProfile(userId, put.body.data));
  }
  const members = `/groups/${group.id}/members`;

  const reads = countStoredUserReads(t, server);
  const list = await api.get(members);
  t.equal(list.status, 200);
  // Compared as text: the keys' order is part of what is answered.
  t.equal(JSON.stringify(list.body.results.map((member: any) => member.profile)), JSON.stringify(expected));
  const one = await api.get(`${members}/${list.body.results[2].id}`);
  t.equal(JSON.stringify(one.body.profile), JSON.stringify(expected[2]));
  t.equal(reads.calls, 0, 'no platform body was parsed to answer the members');
});

t.test('a member answered on /me: its profile comes from the member card, lists and wrappers alike', async (t) => {
  const server = await startServer(t);
  const ada = await person(server, 'ada@example.com');
  const patched = await platform(server).patch(`/users/${ada.userId}/data`, { data: { ...bulk(), first_name: 'Ada' } });
  t.equal(patched.status, 200);
  const { group } = await groupOf(server, ada);
  const profile = JSON.stringify({ user_id: ada.userId, email: 'ada@example.com', first_name: 'Ada' });

  const reads = countStoredUserReads(t, server);
  const mine = await as(server, ada).get('/me/groups');
  t.equal(mine.status, 200);
  t.equal(JSON.stringify(mine.body.results[0].member.profile), profile);
  const wrapper = await as(server, ada).get(`/me/groups/${group.id}`);
  t.equal(JSON.stringify(wrapper.body.member.profile), profile);
  const listed = await as(server, ada).get(`/me/groups/${group.id}/members`);
  t.equal(JSON.stringify(listed.body.results[0].profile), profile);
  t.equal(reads.calls, 0, "no platform body was parsed to answer the caller's members");
});

t.test('member profiles follow profile changes: a name changed, an email removed', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const { group } = await groupOf(server, ada);
  const members = `/groups/${group.id}/members`;
  const profileOf = async () => (await api.get(members)).body.results[0].profile;

  t.same(await profileOf(), { user_id: ada.userId, email: 'ada@example.com' });
  t.equal((await api.patch(`/users/${ada.userId}/data`, { data: { first_name: 'Ada', last_name: 'Byron' } })).status, 200);
  t.equal(JSON.stringify(await profileOf()), JSON.stringify({ user_id: ada.userId, email: 'ada@example.com', first_name: 'Ada', last_name: 'Byron' }));
  t.equal((await api.patch(`/users/${ada.userId}/data`, { data: { first_name: 'Augusta', nickname: 'AAL' } })).status, 200);
  t.equal((await profileOf()).first_name, 'Augusta', 'the member list shows the new first name');
  t.equal((await api.patch(`/users/${ada.userId}/data`, { data: { email: null } })).status, 200);
  t.equal(JSON.stringify(await profileOf()), JSON.stringify({ user_id: ada.userId, first_name: 'Augusta', last_name: 'Byron' }), 'the email is gone');
  const me = await server.request('PATCH', `/me/applications/${server.app.id}/data`, { token: ada.token, body: { data: { last_name: 'King' } } });
  t.equal(me.status, 200);
  t.equal((await profileOf()).last_name, 'King', 'a change on /me shows as well');
  t.same((await as(server, ada).get('/me/groups')).body.results[0].member.profile, { user_id: ada.userId, first_name: 'Augusta', last_name: 'King' });
});

t.test("on /me a member's profile shows only the fields a user may read, as every /me answer; the platform sees them all", async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  // Listed to be set by the app alone: a right a field does not give is not given (API.md).
  await server.deps.apps.update(server.app.id, {
    schema: { fields: { email: { type: 'string' }, last_name: { type: 'string', user_readable: true, user_writable: true } }, allow_unknown_fields: true },
  });
  for (const { userId } of [ada, bob]) t.equal((await api.patch(`/users/${userId}/data`, { data: { first_name: 'F', last_name: 'L' } })).status, 200);
  t.notOk('email' in (await server.request('GET', `/me/applications/${server.app.id}/data`, { token: ada.token })).body.data, 'not readable on /me');

  const { group } = await groupOf(server, ada);
  const added = await as(server, ada).post(`/me/groups/${group.id}/members`, { user_id: bob.userId, roles: [] });
  t.equal(added.status, 200);
  const readable = (userId: string) => JSON.stringify({ user_id: userId, first_name: 'F', last_name: 'L' });
  t.equal(JSON.stringify(added.body.profile), readable(bob.userId), 'a member added on /me');
  t.equal(JSON.stringify((await as(server, ada).get('/me/groups')).body.results[0].member.profile), readable(ada.userId), '/me/groups');
  t.equal(JSON.stringify((await as(server, ada).get(`/me/groups/${group.id}`)).body.member.profile), readable(ada.userId), 'the wrapper');
  const listed = (await as(server, ada).get(`/me/groups/${group.id}/members`)).body.results;
  t.same(listed.map((member: any) => JSON.stringify(member.profile)), [readable(ada.userId), readable(bob.userId)], 'the member list');
  t.equal(JSON.stringify((await as(server, bob).get(`/me/groups/${group.id}/members/${listed[1].id}`)).body.profile), readable(bob.userId), 'one member');

  const seen = (await api.get(`/groups/${group.id}/members`)).body.results.map((member: any) => member.profile.email);
  t.same(seen, ['ada@example.com', 'bob@example.com'], 'the platform sees every field of the card');
});

t.test('on /me a member list is searched by email or phone only where a user may read that field', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  t.equal((await api.patch(`/users/${bob.userId}/data`, { data: { phone_number: '+15550100' } })).status, 200);
  const { group } = await groupOf(server, ada);
  t.equal((await as(server, ada).post(`/me/groups/${group.id}/members`, { user_id: bob.userId, roles: [] })).status, 200);
  const found = async (value: string) =>
    (await as(server, ada).get(`/me/groups/${group.id}/members?lookup_filter=${encodeURIComponent(value)}`)).body.results.map((m: any) => m.user_id);

  const schemaWith = (rights: { user_readable?: boolean }) => ({
    fields: { email: { type: 'string' as const, ...rights }, phone_number: { type: 'string' as const, ...rights } },
    allow_unknown_fields: true,
  });
  await server.deps.apps.update(server.app.id, { schema: schemaWith({ user_readable: true }) });
  t.same(await found('bob@example.com'), [bob.userId], 'by a readable email');
  t.same(await found('+15550100'), [bob.userId], 'by a readable phone');

  await server.deps.apps.update(server.app.id, { schema: schemaWith({}) });
  t.same(await found('bob@example.com'), [], 'an email a user may not read finds no one');
  t.same(await found('+15550100'), [], 'nor a phone');
  t.same(await found(bob.userId), [bob.userId], 'the user ID still does');
  const platformFound = (await api.get(`/groups/${group.id}/members?lookup_filter=bob@example.com`)).body.results.map((m: any) => m.user_id);
  t.same(platformFound, [bob.userId], 'the platform searches every address');
});

t.test('on /me a member or invite names its user by email or phone only where a user may read that field', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  // email listed without rights: the app keeps it from its users; phone_number keeps its implicit ones.
  await server.deps.apps.update(server.app.id, { schema: { fields: { email: { type: 'string' } }, allow_unknown_fields: true } });
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const carol = await person(server, 'carol@example.com');
  const { group } = await groupOf(server, ada);
  await api.post(`/groups/${group.id}/members`, { user_id: bob.userId, roles: [] });
  const base = `/me/groups/${group.id}`;

  const refused = { email: ['users of this app may not read this field: name the user by user_id'] };
  const invite = await as(server, ada).post(`${base}/invites`, { email: 'bob@example.com', roles: [] });
  t.equal(invite.status, 400, "an invite by a hidden email does not tell which member holds it (409 naming bob's ID)");
  t.same(invite.body.field_errors, refused);
  const member = await as(server, ada).post(`${base}/members`, { email: 'carol@example.com', roles: [] });
  t.equal(member.status, 400, "nor does a member by a hidden email (carol's ID in the answer)");
  t.same(member.body.field_errors, refused);
  t.notOk(JSON.stringify([invite.body, member.body]).includes(bob.userId) || JSON.stringify(member.body).includes(carol.userId));

  const pending = (await api.post(`/groups/${group.id}/invites`, { email: 'dee@example.com', roles: [] })).body.invitation;
  const guess = await as(server, ada).put(`${base}/invites/${pending.id}`, { email: 'dee@example.com', roles: ['x'] });
  t.equal(guess.status, 400, 'an invite PUT cannot test a guessed address either');
  t.same(guess.body.field_errors, refused);
  t.same((await api.get(`/groups/${group.id}/invites/${pending.id}`)).body.roles, [], 'and changes nothing');

  const byPhone = await as(server, ada).post(`${base}/invites`, { phone: '+1 555 0100', roles: [] });
  t.equal(byPhone.status, 200, 'a readable phone still names a user');
  t.equal((await as(server, ada).post(`${base}/members`, { user_id: carol.userId, roles: [] })).status, 200, 'and a user ID always');
  t.equal((await api.post(`/groups/${group.id}/invites`, { email: 'carol2@example.com', roles: [] })).status, 200, 'the platform names users by any address');
  t.equal((await api.get(`/groups/${group.id}/members`)).body.total_results, 6, 'ada, bob, dee, the phone, carol and carol2: no refused body made a member');
});
