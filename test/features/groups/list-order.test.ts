import t from 'tap';
import { startServer } from '../../helpers/server.js';
import { holdLocks, queueOn } from '../../helpers/locks.js';
import { userLock } from '../../../src/features/users/directory.js';
import { groupLock } from '../../../src/features/groups/keys.js';
import { as, groupOf, person, platform } from './helpers.js';
import { linkPath, requestLink } from '../../helpers/sign-in.js';

// Lists page by ID: an item committed after a client read the end of a list must sort after it, or
// `after` skips it for good. A turn that must be run again for a lock it lacked (a user named by an
// address it did not know of) used to keep the IDs it drew before the turns that overtook it.
for (const [kind, path, body] of [
  ['invite', 'invites', { email: 'bob@example.com', roles: [] }],
  ['member', 'members', { email: 'bob@example.com', roles: [] }],
] as const) {
  t.test(`${kind === 'invite' ? 'an' : 'a'} ${kind} made after waiting for its user's lock is listed after the ${kind}s committed before it`, async (t) => {
    const server = await startServer(t);
    const api = platform(server);
    const ada = await person(server, 'ada@example.com');
    const bob = await person(server, 'bob@example.com');
    const cy = await person(server, 'cy@example.com');
    const { group } = await groupOf(server, ada);
    const idOf = (res: { body: any }) => (kind === 'invite' ? res.body.invitation.id : res.body.id);
    const lock = groupLock(server.app.id, group.id);
    const last = (await api.get(`/groups/${group.id}/${path}`)).body.results.at(-1)?.id;

    // Bob is busy (a profile write, say) while the group serves two requests in a row.
    const releaseBob = await holdLocks(server, [userLock(server.app.id, bob.userId)]);
    const releaseGroup = await holdLocks(server, [lock]);
    const forBob = await queueOn(server, lock, () => api.post(`/groups/${group.id}/${path}`, body));
    const forCy = await queueOn(server, lock, () => api.post(`/groups/${group.id}/${path}`, { user_id: cy.userId, roles: [] }));
    releaseGroup();
    const cyAnswer = await forCy.answer;
    t.equal(cyAnswer.status, 200);
    const seen = await api.get(`/groups/${group.id}/${path}${last ? `?after=${last}` : ''}`);
    t.same(seen.body.results.map((item: { id: string }) => item.id), [idOf(cyAnswer)], "a client reads the list's end: Cy's");

    releaseBob();
    const bobAnswer = await forBob.answer;
    t.equal(bobAnswer.status, 200);
    const next = await api.get(`/groups/${group.id}/${path}?after=${idOf(cyAnswer)}`);
    t.same(next.body.results.map((item: { id: string }) => item.id), [idOf(bobAnswer)], "Bob's, committed later, is on the page after that end");
  });
}

// A group drew its ID on arrival, then its creator's turn waited for the creator's lock: a group made
// meanwhile with a later ID committed first, and a client holding that one as its cursor skipped it.
t.test("a group made after waiting for its creator's lock is listed after the groups committed before it", async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const ids = (res: { body: any }) => res.body.results.map((group: { id: string }) => group.id);

  // Ada is busy (a profile write, say) while Bob and the app make groups. Her activity was stamped
  // just now, so her request's first wait for her lock is its turn's.
  await as(server, ada).get('/me/groups');
  const adaLock = userLock(server.app.id, ada.userId);
  const releaseAda = await holdLocks(server, [adaLock]);
  const forAda = await queueOn(server, adaLock, () => as(server, ada).post('/me/groups', { name: 'Ada' }));
  const bobs = await groupOf(server, bob, 'Bob');
  const apps = await api.post('/groups', { name: 'App' });
  t.equal(apps.status, 200);
  const seen = await api.get('/groups');
  t.same(ids(seen), [bobs.group.id, apps.body.id], "a client reads the list's end: the app's group");

  releaseAda();
  const adas = await forAda.answer;
  t.equal(adas.status, 200);
  const next = await api.get(`/groups?after=${apps.body.id}`);
  t.same(ids(next), [adas.body.group.id], "Ada's, committed later, is on the page after that end");
  const mine = await as(server, ada).get('/me/groups');
  t.same(mine.body.results.map((item: { group: { id: string } }) => item.group.id), [adas.body.group.id], 'Ada is its first member');
});

// A user ensured by address (a member or invite by email, a platform magic link) drew its ID on
// arrival, before its turn waited for the group: a user made meanwhile with a later ID committed first,
// and a client holding that one as its user list cursor skipped it.
t.test("a user made by a member's email after waiting for the group's lock is listed after the users committed before it", async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const { group } = await groupOf(server, ada);
  const ids = (res: { body: any }) => res.body.results.map((profile: { svc_user: string }) => profile.svc_user);
  const lock = groupLock(server.app.id, group.id);

  const releaseGroup = await holdLocks(server, [lock]);
  const forNewcomer = await queueOn(server, lock, () => api.post(`/groups/${group.id}/members`, { email: 'newcomer@example.com', roles: [] }));
  const made = await api.put('/users/__uuid__/data', { data: { first_name: 'Meanwhile' } });
  t.equal(made.status, 200);
  t.same(ids(await api.get(`/users/data?after=${ada.userId}`)), [made.body.svc_user], "a client reads the list's end: the user made meanwhile");

  releaseGroup();
  const member = await forNewcomer.answer;
  t.equal(member.status, 200);
  t.same(ids(await api.get(`/users/data?after=${made.body.svc_user}`)), [member.body.user_id], 'the newcomer, committed later, is on the page after that end');
});

// A link that joins an open group drew its member's ID when it was redeemed, before its turn waited
// for the group and its user: a member added meanwhile drew a later ID in its own turn and committed first.
t.test("a member joining by link after waiting for its user's lock is listed after the members committed before it", async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const bob = await person(server, 'bob@example.com');
  const cy = await person(server, 'cy@example.com');
  const group = (await api.post('/groups', { name: 'Open', admission_policy: 'open' })).body;
  const link = await requestLink(server, 'bob@example.com', { group_to_join: group.id });
  t.equal(link.status, 200);
  const ids = (res: { body: any }) => res.body.results.map((member: { id: string }) => member.id);
  const lock = groupLock(server.app.id, group.id);

  // Bob is busy (a profile write, say) while the group serves Cy's add and then Bob's link.
  const releaseGroup = await holdLocks(server, [lock]);
  const forCy = await queueOn(server, lock, () => api.post(`/groups/${group.id}/members`, { user_id: cy.userId, roles: [] }));
  const releaseBob = await holdLocks(server, [userLock(server.app.id, bob.userId)]);
  const forBob = await queueOn(server, lock, () => server.request('GET', linkPath(link.body.link), { headers: { accept: 'application/json' } }));
  releaseGroup();
  const cyAnswer = await forCy.answer;
  t.equal(cyAnswer.status, 200);
  t.same(ids(await api.get(`/groups/${group.id}/members`)), [cyAnswer.body.id], "a client reads the list's end: Cy's");

  releaseBob();
  t.equal((await forBob.answer).status, 200);
  const next = await api.get(`/groups/${group.id}/members?after=${cyAnswer.body.id}`);
  t.same(next.body.results.map((member: { user_id: string }) => member.user_id), [bob.userId], "Bob's, committed later, is on the page after that end");
});
