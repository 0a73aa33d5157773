import t from 'tap';
import { startServer } from '../../helpers/server.js';
import { verifyStore } from '../../../src/verify/invariants.js';
import { allInvariants } from '../../../src/verify/all.js';
import { as, assertProfilesConsistent, groupOf, person, platform, profileGroups } from './helpers.js';
import { userLock } from '../../../src/features/users/directory.js';
import { holdLocks, queueOn } from '../../helpers/locks.js';

t.test('platform member create: by user_id, email or phone; first member gets owner', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const group = (await api.post('/groups', { name: 'Crew' })).body;

  const first = await api.post(`/groups/${group.id}/members`, { user_id: ada.userId, roles: ['editor'] });
  t.equal(first.status, 200);
  t.match(first.body, { user_id: ada.userId, group_id: group.id, roles: ['editor', 'owner'], state: 'active', added_by: `app:${server.app.id}` });
  t.match(first.body.id, /^member_/);
  t.same(first.body.profile, { user_id: ada.userId, email: 'ada@example.com' });

  const byEmail = await api.post(`/groups/${group.id}/members`, { email: 'New@Example.com', roles: ['reader'] });
  t.equal(byEmail.status, 200);
  t.same(byEmail.body.roles, ['reader'], 'only the first member gets owner');
  t.equal(byEmail.body.profile.email, 'New@Example.com', 'the user was ensured with the address');
  const byPhone = await api.post(`/groups/${group.id}/members`, { phone: '+1 555 0100', roles: [], state: 'invite_pending' });
  t.equal(byPhone.body.state, 'invite_pending');
  t.equal((await api.get(`/groups/${group.id}`)).body.member_count, 2, 'member_count counts active members');

  const again = await api.post(`/groups/${group.id}/members`, { email: 'new@example.com', roles: [] });
  t.equal(again.status, 409);
  t.equal(again.body.code, 'E_MEMBER_EXISTS');
  const unknown = await api.post(`/groups/${group.id}/members`, { user_id: 'user_missing', roles: [] });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.code, 'E_USER_NOT_FOUND');
  const noGroup = await api.post(`/groups/group_missing/members`, { user_id: ada.userId, roles: [] });
  t.equal(noGroup.body.code, 'E_GROUP_NOT_FOUND');
  await assertProfilesConsistent(t, server, [ada.userId, byEmail.body.user_id, byPhone.body.user_id]);
});

t.test('member bodies: exactly one of user_id/email/phone, roles required, known state', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const group = (await api.post('/groups', { name: 'Crew' })).body;
  const both = await api.post(`/groups/${group.id}/members`, { email: 'a@example.com', phone: '+15550100', roles: [] });
  t.equal(both.status, 400);
  t.same(Object.keys(both.body.field_errors).sort(), ['email', 'phone']);
  const none = await api.post(`/groups/${group.id}/members`, { roles: [] });
  t.equal(none.status, 400);
  t.ok(none.body.field_errors.user_id);
  for (const [body, field] of [
    [{ user_id: 'u1' }, 'roles'],
    [{ user_id: 'u1', roles: 'owner' }, 'roles'],
    [{ user_id: 'u1', roles: [''] }, 'roles[0]'],
    [{ user_id: 'u1', roles: [], state: 'gone' }, 'state'],
    [{ email: 'not-an-email', roles: [] }, 'email'],
  ] as const) {
    const res = await api.post(`/groups/${group.id}/members`, body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.ok(res.body.field_errors[field], `field_errors names ${field}`);
  }
  t.equal((await api.get(`/groups/${group.id}/members`)).body.total_results, 0, 'nothing was created');
  t.equal(server.deps.users.count(server.app.id), 0, 'no user was ensured by a refused body');
});

t.test('roles change by PUT; the last owner can be neither removed nor demoted', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const { group, member: adaMember } = await groupOf(server, ada);
  const bobMember = (await api.post(`/groups/${group.id}/members`, { user_id: bob.userId, roles: ['reader'] })).body;

  const demote = await api.put(`/groups/${group.id}/members/${adaMember.id}`, { roles: ['reader'] });
  t.equal(demote.status, 409);
  t.equal(demote.body.code, 'E_LAST_OWNER');
  const remove = await api.del(`/groups/${group.id}/members/${adaMember.id}`);
  t.equal(remove.body.code, 'E_LAST_OWNER');
  const leave = await as(server, ada).del(`/me/groups/${group.id}/members/${adaMember.id}`);
  t.equal(leave.body.code, 'E_LAST_OWNER', 'the last owner cannot leave either');

  const promoted = await api.put(`/groups/${group.id}/members/${bobMember.id}`, { roles: ['owner', 'reader'] });
  t.equal(promoted.status, 200);
  t.same(promoted.body.roles, ['owner', 'reader']);
  const demoted = await api.put(`/groups/${group.id}/members/${adaMember.id}`, { roles: [] });
  t.equal(demoted.status, 200, 'with another owner, one may step down');
  t.equal((await api.put(`/groups/${group.id}/members/${bobMember.id}`, { roles: [] })).body.code, 'E_LAST_OWNER');
  t.equal((await api.put(`/groups/${group.id}/members/${bobMember.id}`, {})).status, 400, 'roles are required');
  t.equal((await api.put(`/groups/${group.id}/members/member_nope`, { roles: [] })).body.code, 'E_MEMBER_NOT_FOUND');

  t.equal((await api.del(`/groups/${group.id}/members/${adaMember.id}`)).status, 204);
  const after = await api.get(`/groups/${group.id}`);
  t.equal(after.body.member_count, 1);
  await assertProfilesConsistent(t, server, [ada.userId, bob.userId]);
});

t.test('on /me only active owners manage members; members read; anyone may leave', async (t) => {
  const server = await startServer(t);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const cy = await person(server, 'cy@example.com');
  const eve = await person(server, 'eve@example.com');
  const { group } = await groupOf(server, ada);
  const base = `/me/groups/${group.id}/members`;

  const added = await as(server, ada).post(base, { user_id: bob.userId, roles: ['reader'] });
  t.equal(added.status, 200);
  t.equal(added.body.added_by, `user:${ada.userId}`);
  const pending = (await platform(server).post(`/groups/${group.id}/members`, { user_id: cy.userId, roles: [], state: 'invite_pending' })).body;

  t.equal((await as(server, bob).post(base, { user_id: eve.userId, roles: [] })).status, 403);
  t.equal((await as(server, bob).put(`${base}/${pending.id}`, { roles: ['x'] })).status, 403);
  t.equal((await as(server, bob).del(`${base}/${pending.id}`)).status, 403);
  t.equal((await as(server, eve).get(base)).status, 404, 'outsiders do not see the group');
  t.equal((await as(server, eve).post(base, { user_id: eve.userId, roles: [] })).status, 404);

  const list = await as(server, bob).get(base);
  t.equal(list.status, 200);
  t.equal(list.body.total_results, 3);
  t.equal((await as(server, bob).get(`${base}/${pending.id}`)).status, 200, 'active members read other members');
  t.equal((await as(server, cy).get(base)).status, 403, 'a pending member does not list the members');
  t.equal((await as(server, cy).get(`${base}/${pending.id}`)).body.id, pending.id, 'but reads its own member');
  t.equal((await as(server, cy).get(`${base}/${added.body.id}`)).status, 403);

  t.equal((await as(server, ada).put(`${base}/${added.body.id}`, { roles: ['writer'] })).body.roles[0], 'writer');
  t.equal((await as(server, bob).del(`${base}/${added.body.id}`)).status, 204, 'bob leaves');
  t.equal((await as(server, bob).get(`/me/groups/${group.id}`)).status, 404);
  t.equal((await as(server, ada).del(`${base}/${pending.id}`)).status, 204);
  await assertProfilesConsistent(t, server, [ada.userId, bob.userId, cy.userId]);
});

t.test('an owner on /me adds members active only: invite_pending and invite_rejected are 403 and change nothing', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const { group } = await groupOf(server, ada);
  const base = `/me/groups/${group.id}/members`;
  for (const state of ['invite_pending', 'invite_rejected']) {
    for (const target of [{ user_id: bob.userId }, { email: 'new@example.com' }]) {
      const refused = await as(server, ada).post(base, { ...target, roles: [], state });
      t.equal(refused.status, 403, `${state} ${JSON.stringify(target)}`);
      t.match(refused.body, { statusCode: 403, error: 'Forbidden', code: 'E_FORBIDDEN', message: /invite/, messages: [/invite/] });
    }
  }
  t.equal((await api.get(`/groups/${group.id}/members`)).body.total_results, 1, 'no member was made');
  t.same(server.deps.users.findByAddress(server.app.id, 'email', 'new@example.com'), [], 'no user was ensured');
  t.same(profileGroups(server, bob.userId), [], "bob's profile names no group");

  const added = await as(server, ada).post(base, { user_id: bob.userId, roles: [], state: 'active' });
  t.equal(added.status, 200, 'active, named or by default, is an owner\'s to add');
  t.equal(added.body.state, 'active');
  const platformMade = await api.post(`/groups/${group.id}/members`, { email: 'rejected@example.com', roles: [], state: 'invite_rejected' });
  t.equal(platformMade.status, 200, 'the application may create a member in any state');
  t.equal(platformMade.body.state, 'invite_rejected');
  const same = await api.put(`/groups/${group.id}/members/${platformMade.body.id}`, { roles: [] });
  t.equal(same.status, 409, 'a rejected member takes no roles, not even the ones it holds');
  t.equal(same.body.code, 'E_INVALID_STATE_TRANSITION');
  await assertProfilesConsistent(t, server, [ada.userId, bob.userId]);
});

t.test('member lists page by ID and filter on user ID, email or phone', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const group = (await api.post('/groups', { name: 'Crew' })).body;
  const ids: string[] = [];
  const users: string[] = [];
  for (const email of ['a@example.com', 'b@example.com', 'c@example.com', 'd@example.com']) {
    const m = (await api.post(`/groups/${group.id}/members`, { email, roles: [] })).body;
    ids.push(m.id);
    users.push(m.user_id);
  }
  const phone = (await api.post(`/groups/${group.id}/members`, { phone: '+1 (555) 0199', roles: [] })).body;
  ids.push(phone.id);
  const base = `/groups/${group.id}/members`;
  const first = await api.get(`${base}?page_size=2`);
  t.equal(first.body.total_results, 5);
  t.same(first.body.results.map((m: any) => m.id), ids.slice(0, 2));
  t.same((await api.get(`${base}?page_size=2&after=${ids[1]}`)).body.results.map((m: any) => m.id), ids.slice(2, 4));
  t.same((await api.get(`${base}?page_size=2&after=${ids[3]}`)).body.results.map((m: any) => m.id), ids.slice(4));

  const filtered = await api.get(`${base}?lookup_filter=${encodeURIComponent(`${users[2]},B@EXAMPLE.com,+15550199,nobody@example.com`)}`);
  t.equal(filtered.body.total_results, 3);
  t.same(filtered.body.results.map((m: any) => m.id), [ids[1], ids[2], ids[4]]);
  const paged = await api.get(`${base}?lookup_filter=${users[2]},b@example.com&page_size=1&after=${ids[1]}`);
  t.same(paged.body.results.map((m: any) => m.id), [ids[2]]);
  t.equal((await api.get(`${base}?page_size=101`)).status, 400);
  t.equal((await api.get(`/groups/group_nope/members`)).body.code, 'E_GROUP_NOT_FOUND');
  t.equal((await api.get(`${base}/member_nope`)).body.code, 'E_MEMBER_NOT_FOUND');
});

t.test('concurrent adds of the same user: one member, one 409', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const group = (await api.post('/groups', { name: 'Crew' })).body;
  const answers = await Promise.all(
    Array.from({ length: 6 }, () => api.post(`/groups/${group.id}/members`, { email: 'race@example.com', roles: [] })),
  );
  t.same(answers.map((a) => a.status).sort(), [200, 409, 409, 409, 409, 409]);
  const after = await api.get(`/groups/${group.id}`);
  t.equal(after.body.member_count, 1);
  t.equal((await api.get(`/groups/${group.id}/members`)).body.total_results, 1);
  t.equal(server.deps.users.count(server.app.id), 1);
});

t.test('a user in many groups, some by pending invite, is deleted at once', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const groups: string[] = [];
  for (let i = 0; i < 12; i++) {
    const group = (await api.post('/groups', { name: `G${i}` })).body;
    groups.push(group.id);
    const joined = i % 2 === 0
      ? await api.post(`/groups/${group.id}/members`, { user_id: ada.userId, roles: [] })
      : await api.post(`/groups/${group.id}/invites`, { user_id: ada.userId, roles: [] });
    t.equal(joined.status, 200, joined.text);
  }
  const deleted = await server.request('DELETE', `/applications/${server.app.id}/users/${ada.userId}/data`, { app: server.app });
  t.equal(deleted.status, 204, deleted.text);
  for (const groupId of groups) {
    t.equal((await api.get(`/groups/${groupId}/members`)).body.total_results, 0, `${groupId}: no member left`);
    t.equal((await api.get(`/groups/${groupId}/invites`)).body.results.filter((i: any) => i.state === 'pending').length, 0);
  }
  t.same(verifyStore(server.deps, allInvariants).problems, []);
});

t.test('deleting a user removes its members, pending invites and pairs in the same turn', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const { group } = await groupOf(server, ada);
  const bobsOwn = await groupOf(server, bob, 'Solo');
  await api.post(`/groups/${group.id}/members`, { user_id: bob.userId, roles: ['owner'] });
  const other = (await api.post('/groups', { name: 'Other' })).body;
  const invite = (await api.post(`/groups/${other.id}/invites`, { user_id: bob.userId, roles: [] })).body.invitation;

  const deleted = await server.request('DELETE', `/applications/${server.app.id}/users/${bob.userId}/data`, { app: server.app });
  t.equal(deleted.status, 204);
  t.equal((await api.get(`/groups/${group.id}`)).body.member_count, 1);
  t.equal((await api.get(`/groups/${group.id}/members?lookup_filter=${bob.userId}`)).body.total_results, 0);
  t.equal((await api.get(`/groups/${other.id}/invites/${invite.id}`)).status, 404, 'its pending invite went with its member');
  const solo = await api.get(`/groups/${bobsOwn.group.id}`);
  t.equal(solo.body.member_count, 0, 'a group whose last owner was deleted stays, without members');
  t.same(server.deps.profiles.groupEntries(server.app.id, bob.userId), []);
  await assertProfilesConsistent(t, server, [ada.userId]);
  t.same(verifyStore(server.deps, allInvariants).problems, []);
});

t.test('a user deleted right after joining many groups: the deletion catches up with them all at once, no 503', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const groups = await Promise.all(Array.from({ length: 10 }, async (_, i) => (await api.post('/groups', { name: `J${i}` })).body.id as string));
  // The joins queue on ada's lock, then the deletion behind them: it named its locks before any join committed.
  const lock = userLock(server.app.id, ada.userId);
  const release = await holdLocks(server, [lock]);
  const joins = [];
  for (const groupId of groups) joins.push((await queueOn(server, lock, () => api.post(`/groups/${groupId}/members`, { user_id: ada.userId, roles: [] }))).answer);
  const deleted = await queueOn(server, lock, () => server.request('DELETE', `/applications/${server.app.id}/users/${ada.userId}/data`, { app: server.app }));
  release();
  for (const joined of await Promise.all(joins)) t.equal(joined.status, 200);
  const answer = await deleted.answer;
  t.equal(answer.status, 204, answer.text);
  for (const groupId of groups) t.equal((await api.get(`/groups/${groupId}`)).body.member_count, 0);
  t.same(verifyStore(server.deps, allInvariants).problems, []);
});
