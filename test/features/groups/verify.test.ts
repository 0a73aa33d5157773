import t from 'tap';
import { startServer } from '../../helpers/server.js';
import { verifyStore } from '../../../src/verify/invariants.js';
import { groupInvariants } from '../../../src/features/groups/invariants.js';
import { as, groupOf, person, platform } from './helpers.js';

t.test('group invariants hold after real traffic and report each kind of breakage', async (t) => {
  const server = await startServer(t);
  const { deps } = server;
  const api = platform(server);
  const appId = server.app.id;
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const { group } = await groupOf(server, ada);
  await api.post(`/groups/${group.id}/members`, { user_id: bob.userId, roles: [] });
  const { invitation } = (await api.post(`/groups/${group.id}/invites`, { email: 'cy@example.com', roles: [] })).body;
  await as(server, ada).put(`/me/groups/${group.id}`, { name: 'Renamed' });
  t.same(verifyStore(deps, groupInvariants).problems, []);

  const table = deps.runtime.table('group');
  const stored = table.get([appId, group.id])!;
  const bumped = structuredClone(stored);
  bumped.snapshot.context.tally.active += 1;
  await deps.store.commit(() => table.put([appId, group.id], bumped));
  // A group's rendering is kept once, not in each member's profile: only it goes stale.
  const afterBump = verifyStore(deps, groupInvariants).problems;
  t.match(afterBump, [/group totals.*recount finds/, /profile groups.*rendering of group .* is stale/]);
  t.equal(afterBump.length, 2, 'no member entry went stale with it');
  await deps.store.commit(() => table.put([appId, group.id], stored));

  const rendering = deps.profiles.groupViews.getBinary([appId, group.id])!;
  await deps.store.commit(() => {
    deps.profiles.groupViews.remove([appId, group.id]);
    deps.profiles.groupViews.put([appId, 'group_gone'], rendering);
  });
  const moved = verifyStore(deps, groupInvariants).problems;
  t.match(moved, [/rendering of group .* is missing/, /group rendering .*group_gone.* belongs to no group/]);
  t.equal(moved.length, 2);
  await deps.store.commit(() => {
    deps.profiles.groupViews.put([appId, group.id], rendering);
    deps.profiles.groupViews.remove([appId, 'group_gone']);
  });

  const pairKey = [appId, bob.userId, group.id];
  const pair = deps.profiles.memberships.get(pairKey)!;
  await deps.store.commit(() => deps.profiles.memberships.remove(pairKey));
  const withoutEntry = verifyStore(deps, groupInvariants).problems;
  t.match(withoutEntry, [/profile groups.*has no entry/]);
  t.equal(withoutEntry.length, 1);
  await deps.store.commit(() => deps.profiles.memberships.put(pairKey, pair));

  const members = deps.runtime.table('member');
  const memberId = deps.runtime.read<any>('invite', [appId, group.id, invitation.id])!.context.member_id;
  const member = members.get([appId, group.id, memberId])!;
  await deps.store.commit(() => members.remove([appId, group.id, memberId]));
  const withoutMember = verifyStore(deps, groupInvariants).problems;
  t.match(withoutMember, [/group totals/, /pending invites and members.*no invite_pending member/, /profile groups.*belongs to no member/]);
  t.equal(withoutMember.length, 3);
  await deps.store.commit(() => members.put([appId, group.id, memberId], member));
  t.same(verifyStore(deps, groupInvariants).problems, []);
});
