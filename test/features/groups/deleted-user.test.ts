import t from 'tap';
import { startServer } from '../../helpers/server.js';
import { tokenFor } from '../../helpers/tokens.js';
import { verifyStore } from '../../../src/verify/invariants.js';
import { allInvariants } from '../../../src/verify/all.js';
import { as, assertProfilesConsistent, person, platform } from './helpers.js';

t.test("a deleted user's invites go with it: a user re-created under its ID sees none of them", async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const userPath = `/users/bob/data`;
  t.equal((await api.put(userPath, { data: { email: 'bob@example.com' } })).status, 200);
  const ada = await person(server, 'ada@example.com');
  const groups = [];
  for (const name of ['Left', 'Rejected', 'Stayed', 'Pending']) {
    const group = (await api.post('/groups', { name })).body;
    t.equal((await api.post(`/groups/${group.id}/members`, { user_id: ada.userId, roles: [] })).status, 200);
    groups.push(group.id as string);
  }
  const [left, rejected, stayed, pending] = groups;
  const inviteIn = async (groupId: string) => {
    const res = await api.post(`/groups/${groupId}/invites`, { user_id: 'bob', roles: ['reader'], redirect_url: '/old' });
    t.equal(res.status, 200, `bob is invited to ${groupId}`);
    return res.body.invitation.id as string;
  };
  const bob = await tokenFor(server, { user_id: 'bob' });
  const invites = {
    left: await inviteIn(left),
    rejected: await inviteIn(rejected),
    stayed: await inviteIn(stayed),
    pending: await inviteIn(pending),
  };
  t.equal((await as(server, bob).post(`/me/groups/${left}/invites/${invites.left}/accept`)).status, 200);
  const own = (await as(server, bob).get(`/me/groups/${left}`)).body.member;
  t.equal((await as(server, bob).del(`/me/groups/${left}/members/${own.id}`)).status, 204, 'bob leaves: its answered invite names the group no more');
  t.equal((await as(server, bob).post(`/me/groups/${rejected}/invites/${invites.rejected}/reject`)).status, 200);
  t.equal((await as(server, bob).post(`/me/groups/${stayed}/invites/${invites.stayed}/accept`)).status, 200);

  t.equal((await api.del(userPath)).status, 204);
  for (const [name, inviteId] of Object.entries(invites)) {
    const groupId = groups[Object.keys(invites).indexOf(name)];
    t.equal((await api.get(`/groups/${groupId}/invites/${inviteId}`)).status, 404, `the ${name} invite went with its user`);
    const listed = await api.get(`/groups/${groupId}/invites?ensured_user_id=bob`);
    t.same(listed.body, { total_results: 0, results: [] }, `no invite of bob is listed in ${name}`);
    t.equal((await api.get(`/groups/${groupId}/invites`)).body.total_results, 0, `${name} counts no invite`);
  }
  t.same(verifyStore(server.deps, allInvariants).problems, []);

  t.equal((await api.put(userPath, { data: { email: 'new-bob@example.com' } })).status, 200, 'an app re-creates bob');
  const again = await inviteIn(left);
  const newBob = await tokenFor(server, { user_id: 'bob' });
  const mine = await as(server, newBob).get(`/me/groups/${left}/invites`);
  t.equal(mine.status, 200);
  t.same(mine.body.results.map((invite: any) => invite.id), [again], 'the new bob sees its own invite alone');
  t.equal((await as(server, newBob).get(`/me/groups/${left}/invites/${invites.left}`)).status, 404, "nor can it read the old bob's");
  await assertProfilesConsistent(t, server, [ada.userId, 'bob']);
});
