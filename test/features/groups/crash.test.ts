import t from 'tap';
import { startServer } from '../../helpers/server.js';
import { startChildServer } from '../../helpers/child.js';
import { tokenFor } from '../../helpers/tokens.js';
import { profileGroups } from './helpers.js';
import { verifyStore } from '../../../src/verify/invariants.js';
import { allInvariants } from '../../../src/verify/all.js';

// An acknowledged acceptance survives kill -9, and no acceptance is ever half applied: the invite
// and its member move in one commit (with the sign-in, for a redeemed link), so after a crash they
// agree, and member_count agrees with both. Half the invites are accepted on /me, half by their link.

const PUBLIC_URL = 'http://127.0.0.1:9';
const INVITES = 40;

t.test('an acknowledged acceptance is never half applied after SIGKILL', async (t) => {
  const dataDir = t.testdir();
  const env = { SVC_PUBLIC_URL: PUBLIC_URL };

  const setup = await startServer(t, { dataDir, env });
  const app = setup.app;
  const owner = await tokenFor(setup, { email: 'owner@example.com' });
  const group = (await setup.request('POST', '/me/groups', { token: owner.token, body: { name: 'Crew' } })).body.group;
  const invited: Array<{ inviteId: string; userId: string; token: string; link: string }> = [];
  for (let i = 0; i < INVITES; i++) {
    const res = await setup.request('POST', `/applications/${app.id}/groups/${group.id}/invites`, {
      app,
      body: { email: `guest${i}@example.com`, roles: ['guest'] },
    });
    const userId = res.body.invitation.ensured_user_id;
    const { token } = await tokenFor(setup, { user_id: userId });
    invited.push({ inviteId: res.body.invitation.id, userId, token, link: res.body.link });
  }
  await setup.close();

  const child = await startChildServer(t, { dataDir, env });
  const acknowledged = new Set<string>();
  let firstAck!: () => void;
  const someAcknowledged = new Promise<void>((resolve) => (firstAck = resolve));
  const accept = ({ inviteId, token, link }: (typeof invited)[number], i: number) =>
    i % 2 === 0
      ? fetch(`${child.url}/me/groups/${group.id}/invites/${inviteId}/accept`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })
      : fetch(`${child.url}${new URL(link).pathname}`, { headers: { accept: 'application/json' } });
  const attempts = invited.map((invite, i) =>
    accept(invite, i).then(
      (res) => {
        if (res.status === 200) {
          acknowledged.add(invite.inviteId);
          if (acknowledged.size >= 3) firstAck();
        }
      },
      () => undefined,
    ),
  );
  await Promise.race([someAcknowledged, Promise.all(attempts)]);
  child.child.kill('SIGKILL');
  await child.exited;
  await Promise.all(attempts);
  const seenAcks = new Set(acknowledged);
  t.ok(seenAcks.size >= 3, `some acceptances were acknowledged (${seenAcks.size})`);

  const after = await startServer(t, { dataDir, env });
  const { runtime } = after.deps;
  let accepted = 0;
  for (const { inviteId, userId } of invited) {
    const invite = runtime.read<any>('invite', [app.id, group.id, inviteId])!;
    const member = runtime.read<any>('member', [app.id, group.id, invite.context.member_id])!;
    const wanted = invite.state === 'accepted' ? 'active' : 'invite_pending';
    t.equal(member.state, wanted, `invite ${invite.state} and member ${member.state} agree`);
    if (seenAcks.has(inviteId)) t.equal(invite.state, 'accepted', 'an acknowledged acceptance survived');
    const user = after.deps.users.require(app.id, userId);
    const signedInByLink = user.context.meta.last_sign_in_method === 'invite_link';
    if (signedInByLink) t.equal(invite.state, 'accepted', 'a committed link sign-in came with its acceptance');
    if (invite.state === 'accepted') accepted++;
    const pairs = profileGroups(after, userId, app.id);
    t.equal(pairs[0]?.member.state, wanted, "the user's profile agrees");
  }
  const stored = runtime.read<any>('group', [app.id, group.id])!;
  t.equal(stored.context.tally.active, 1 + accepted, 'member_count counts exactly the accepted and the owner');
  t.equal(profileGroups(after, owner.userId, app.id)[0].group.member_count, 1 + accepted, "the owner's profile shows that count");
  t.same(verifyStore(after.deps, allInvariants).problems, [], 'every stored invariant holds after the crash');
});
