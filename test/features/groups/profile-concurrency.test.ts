import t from 'tap';
import { startServer } from '../../helpers/server.js';
import { verifyStore } from '../../../src/verify/invariants.js';
import { allInvariants } from '../../../src/verify/all.js';
import { USER_KIND, userKey, userLock } from '../../../src/features/users/directory.js';
import { encodeGroupEntries } from '../../../src/features/users/view-record.js';
import type { UserContext } from '../../../machines/user.machine.js';
import { as, assertProfilesConsistent, groupOf, person, platform, profileGroups } from './helpers.js';

// A profile write holds only its user's lock and a group change only its group's, yet both rewrite
// the user's view record: nothing either does may be lost when they run at once.
t.test("profile writes and changes to the user's groups at once leave every profile exact", async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const groups = [];
  for (const name of ['one', 'two', 'three', 'four']) groups.push((await groupOf(server, ada, name)).group.id as string);
  const memberOf = new Map<string, string>();
  for (const groupId of groups) {
    const added = await api.post(`/groups/${groupId}/members`, { user_id: bob.userId, roles: [] });
    t.equal(added.status, 200);
    memberOf.set(groupId, added.body.id);
  }
  const leaving = groups[3];

  for (let round = 0; round < 15; round++) {
    const answers = await Promise.all([
      ...[0, 1, 2].map((n) => api.patch(`/users/${bob.userId}/data`, { data: { [`field_${n}`]: round } })),
      ...groups.slice(0, 3).map((groupId) => api.put(`/groups/${groupId}/members/${memberOf.get(groupId)}`, { roles: [`r${round}`] })),
      ...groups.map((groupId) => as(server, ada).put(`/me/groups/${groupId}`, { name: `${groupId.slice(-4)} ${round}` })),
      round % 2 === 0
        ? as(server, bob).del(`/me/groups/${leaving}/members/${memberOf.get(leaving)}`)
        : api.post(`/groups/${leaving}/members`, { user_id: bob.userId, roles: [] }).then((added) => {
            memberOf.set(leaving, added.body.id);
            return added;
          }),
    ]);
    t.same(answers.filter((answer) => answer.status >= 300).map((answer) => answer.text), [], `round ${round}: every change is taken`);
  }

  const profile = (await api.get(`/users/${bob.userId}/data`)).body;
  t.match(profile.data, { field_0: 14, field_1: 14, field_2: 14 });
  t.same(profile.groups.map((pair: any) => pair.group.id), groups.slice(0, 3), 'bob left the fourth group in the last round');
  for (const pair of profile.groups) {
    t.same(pair.member.roles, ['r14']);
    t.match(pair.group.name, / 14$/);
  }
  await assertProfilesConsistent(t, server, [ada.userId, bob.userId]);
  t.same(verifyStore(server.deps, allInvariants).problems, []);
});

// A group turn changes a user's memberships inside its transaction, holding no lock of the user. A
// profile write that starts while that transaction is open commits after it, and must not put the
// older memberships back: as it would if it rendered its record outside its own transaction, from
// what was committed before (docs/PERFORMANCE-HISTORY.md, fifth round).
t.test("a profile write staged while a group turn changes the user's memberships keeps that change", async (t) => {
  const server = await startServer(t);
  const { runtime, users, profiles } = server.deps;
  const appId = server.app.id;
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const { group } = await groupOf(server, ada);
  const writeProfile = (round: number) =>
    runtime.run([userLock(appId, bob.userId)], (turn) => {
      const { data, attributes } = turn.get<UserContext>(USER_KIND, userKey(appId, bob.userId))!.context;
      users.update(turn, appId, bob.userId, { data: { ...data, round }, attributes });
    });
  for (let round = 0; round < 5; round++) {
    let written: Promise<void> | undefined;
    await runtime.run([`probe:${round}`], (turn) => {
      turn.put(profiles.memberships, [appId, bob.userId, group.id], { id: `member_${round}`, roles: [`r${round}`] });
      users.refreshGroup(turn, appId, bob.userId, group.id);
      turn.derive(() => (written = writeProfile(round)));
    });
    await written;
    const listed = encodeGroupEntries(profiles.groupEntries(appId, bob.userId));
    t.ok(profiles.storedGroups(appId, bob.userId)!.equals(listed), `round ${round}: the record lists the membership`);
    t.same(profileGroups(server, bob.userId).map((pair: any) => pair.member.roles), [[`r${round}`]]);
  }
});

t.test('a schema change re-renders the /me body of a user in groups, with its groups', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const { group } = await groupOf(server, ada);
  t.equal((await api.patch(`/users/${ada.userId}/data`, { data: { nickname: 'Countess' } })).status, 200);
  const mePath = `/me/applications/${server.app.id}/data`;
  const before = (await as(server, ada).get(mePath)).body;
  t.equal(before.data.nickname, undefined, 'an unknown field is the app\'s');
  t.same(before.groups.map((pair: any) => pair.group.id), [group.id]);

  await server.deps.apps.update(server.app.id, {
    schema: { fields: { nickname: { type: 'string', user_readable: true } }, allow_unknown_fields: true },
  });
  const after = await as(server, ada).get(mePath);
  t.equal(after.status, 200);
  t.equal(after.body.data.nickname, 'Countess', 'rendered again under the new schema');
  t.same(after.body.groups, before.groups, 'with the same groups');
});

// Creating a group makes its creator a member; deleting the creator at the same moment must not
// leave that member (and its profile entry) behind for a user that is gone.
t.test('a user deleted while it creates a group leaves no member behind', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  for (let round = 0; round < 12; round++) {
    const who = await person(server, `gone${round}@example.com`);
    const [created, deleted] = await Promise.all([
      as(server, who).post('/me/groups', { name: `g${round}` }),
      api.del(`/users/${who.userId}/data`),
    ]);
    t.equal(deleted.status, 204, `round ${round}: the deletion is taken`);
    t.ok([200, 401].includes(created.status), `round ${round}: the creation is taken or refused (${created.status})`);
  }
  t.same(verifyStore(server.deps, allInvariants).problems, []);
});
