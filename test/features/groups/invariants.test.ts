import t from 'tap';
import fc from 'fast-check';
import { startServer } from '../../helpers/server.js';
import { verifyStore } from '../../../src/verify/invariants.js';
import { groupInvariants } from '../../../src/features/groups/invariants.js';
import { as, assertProfilesConsistent, groupOf, person, platform, type Person } from './helpers.js';

// Random sequences of member and invite operations against one group: whatever each answers, no
// answer is a 500, and afterwards the totals, the invite/member pairing and every profile agree.

type Op =
  | { kind: 'add' | 'invite'; who: number; owner: boolean; pending: boolean }
  | { kind: 'accept' | 'reject' | 'removeMember' | 'deleteInvite' | 'leave'; who: number }
  | { kind: 'roles'; who: number; owner: boolean }
  | { kind: 'rename'; name: string };

// 0–3 are other people, 4 the group's owner: removing, demoting or losing the owner must be tried too.
const who = fc.integer({ min: 0, max: 4 });
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constantFrom('add' as const, 'invite' as const), who, owner: fc.boolean(), pending: fc.boolean() }),
  fc.record({ kind: fc.constantFrom('accept' as const, 'reject' as const, 'removeMember' as const, 'deleteInvite' as const, 'leave' as const), who }),
  fc.record({ kind: fc.constant('roles' as const), who, owner: fc.boolean() }),
  fc.record({ kind: fc.constant('rename' as const), name: fc.constantFrom('A', 'B') }),
);

t.test('member and invite operations keep counts, pairs and profiles consistent', async (t) => {
  // Hundreds of /me writes by one owner: above the per-user write limit, which is not under test here.
  const server = await startServer(t, { env: { SVC_RATE_LIMIT_USER_WRITES: '100000/100000' } });
  const api = platform(server);
  const people: Person[] = [];
  for (const email of ['p0@example.com', 'p1@example.com', 'p2@example.com', 'p3@example.com']) people.push(await person(server, email));
  const owner = await person(server, 'owner@example.com');

  await fc.assert(
    fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 14 }), async (ops) => {
      const { group } = await groupOf(server, owner);
      const base = `/groups/${group.id}`;
      const memberOf = async (p: Person) => (await api.get(`${base}/members?lookup_filter=${p.userId}`)).body.results[0];
      const pendingInviteOf = async (p: Person) =>
        (await api.get(`${base}/invites?ensured_user_id=${p.userId}`)).body.results.find((i: any) => i.state === 'pending');
      for (const step of ops) {
        const p = 'who' in step ? [...people, owner][step.who] : owner;
        const roles = 'owner' in step && step.owner ? ['owner'] : ['guest'];
        let status = 0;
        if (step.kind === 'add') status = (await api.post(`${base}/members`, { user_id: p.userId, roles, state: step.pending ? 'invite_pending' : 'active' })).status;
        if (step.kind === 'invite') status = (await as(server, owner).post(`/me${base}/invites`, { user_id: p.userId, roles })).status;
        if (step.kind === 'accept' || step.kind === 'reject') {
          const invite = await pendingInviteOf(p);
          if (invite) status = (await as(server, p).post(`/me${base}/invites/${invite.id}/${step.kind}`)).status;
        }
        if (step.kind === 'deleteInvite') {
          const invite = await pendingInviteOf(p);
          if (invite) status = (await api.del(`${base}/invites/${invite.id}`)).status;
        }
        if (step.kind === 'removeMember' || step.kind === 'leave' || step.kind === 'roles') {
          const member = await memberOf(p);
          if (member && step.kind === 'removeMember') status = (await api.del(`${base}/members/${member.id}`)).status;
          if (member && step.kind === 'leave') status = (await as(server, p).del(`/me${base}/members/${member.id}`)).status;
          if (member && step.kind === 'roles') status = (await api.put(`${base}/members/${member.id}`, { roles })).status;
        }
        if (step.kind === 'rename') status = (await api.put(base, { name: step.name })).status;
        if (status >= 500) throw new Error(`${JSON.stringify(step)} answered ${status}`);
      }

      const members = (await api.get(`${base}/members?page_size=100`)).body;
      const invites = (await api.get(`${base}/invites?page_size=100`)).body;
      const current = (await api.get(base)).body;
      t.equal(members.total_results, members.results.length);
      t.equal(invites.total_results, invites.results.length);
      t.equal(current.member_count, members.results.filter((m: any) => m.state === 'active').length, 'member_count is exact');
      const owners = members.results.filter((m: any) => m.state === 'active' && m.roles.includes('owner'));
      t.ok(owners.length >= 1, 'the group keeps an active owner');
      for (const invite of invites.results.filter((i: any) => i.state === 'pending')) {
        const member = members.results.find((m: any) => m.user_id === invite.ensured_user_id);
        t.equal(member?.state, 'invite_pending', 'a pending invite has its pending member');
        t.same(member?.roles, invite.roles, 'with the invite roles');
      }
      const pendingUsers = invites.results.filter((i: any) => i.state === 'pending').map((i: any) => i.ensured_user_id);
      t.equal(new Set(pendingUsers).size, pendingUsers.length, 'one pending invite per user');
      await assertProfilesConsistent(t, server, [owner.userId, ...people.map((p) => p.userId)]);
      t.same(verifyStore(server.deps, groupInvariants).problems, [], 'the stored invariants hold');
    }),
    { numRuns: 12 },
  );
});
