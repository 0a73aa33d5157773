import t from 'tap';
import { startServer, type TestServer } from '../../helpers/server.js';
import { linkPath, profileOf, requestLink } from '../../helpers/sign-in.js';
import { ApiError } from '../../../src/lib/errors.js';
import { userLock } from '../../../src/features/users/directory.js';
import type { LinkFacts, PurposeHandler } from '../../../src/features/magic-links/purposes.js';

const GROUP_OPEN = 'group_01JD0000000000000000000001';
const GROUP_CLOSED = 'group_01JD0000000000000000000002';
const GROUP_BROKEN = 'group_01JD0000000000000000000003';

/** A stand-in for the groups feature: joins are rows in a db of its own, written in the redemption turn. */
function registerJoins(server: TestServer) {
  const joins = server.deps.store.db<true>('test_joins');
  const seen: Array<LinkFacts<'join_group'>> = [];
  const handler: PurposeHandler<'join_group'> = {
    method: 'magic_link',
    check(_turn, link) {
      if (link.purpose.groupId === GROUP_CLOSED) throw new ApiError(400, 'E_VALIDATION', 'the group is not open');
    },
    locks: (link) => [`test-group:${link.purpose.groupId}`],
    redeem(turn, link) {
      seen.push(link);
      if (link.purpose.groupId === GROUP_BROKEN) throw new ApiError(409, 'E_GROUP_FULL', 'the group is full');
      turn.put(joins, [link.purpose.groupId, link.userId], true);
    },
  };
  server.deps.magicLinks.purposes.register('join_group', handler);
  return { joins, seen };
}

const makeLink = (server: TestServer, group_to_join: string) => requestLink(server, 'ada@example.com', { group_to_join });

t.test('group_to_join runs the registered handler in the redemption turn', async (t) => {
  const server = await startServer(t);
  const { joins, seen } = registerJoins(server);

  const closed = await makeLink(server, GROUP_CLOSED);
  t.equal(closed.status, 400, 'the handler refuses at creation');
  t.equal(server.deps.users.count(server.app.id), 0, 'and nothing was stored');

  const made = await makeLink(server, GROUP_OPEN);
  t.equal(made.status, 200);
  const redeemed = await server.request('GET', linkPath(made.body.link));
  t.equal(redeemed.status, 200);
  t.same(seen, [{ appId: server.app.id, userId: made.body.app_user_id, purpose: { kind: 'join_group', groupId: GROUP_OPEN } }]);
  t.equal(joins.get([GROUP_OPEN, made.body.app_user_id]), true, 'the join was committed with the sign-in');
});

t.test('a handler that throws leaves the link unspent and the user signed out', async (t) => {
  const server = await startServer(t);
  registerJoins(server);
  const made = await makeLink(server, GROUP_BROKEN);
  const refused = await server.request('GET', linkPath(made.body.link));
  t.equal(refused.status, 409);
  t.equal(refused.body.code, 'E_GROUP_FULL');
  const profile = profileOf(server, made.body.app_user_id);
  t.same(profile.verified_data, {}, 'no sign-in was committed');
  t.equal(profile.meta.last_sign_in, undefined);
  t.equal((await server.request('GET', linkPath(made.body.link))).status, 409, 'the link is still pending');
});

t.test('invite links: made inside another feature’s turn, stamped invite_link, revocable by ref', async (t) => {
  const server = await startServer(t);
  const { runtime, users, magicLinks } = server.deps;
  const accepted: string[] = [];
  magicLinks.purposes.register('invite', {
    method: 'invite_link',
    check: () => {},
    locks: (link) => [`test-invite:${link.purpose.inviteId}`],
    redeem: (_turn, link) => void accepted.push(link.purpose.inviteId),
  });
  const plan = users.planEnsure(server.app.id, { email: 'bob@example.com' });
  const newUserLock = plan.locks.find((lock) => lock.startsWith('user:'))!;
  const invite = (inviteId: string, redirectUrl = 'https://app.example.com/groups') =>
    runtime.run(plan.locks, (turn) => {
      const { userId } = plan.apply(turn);
      t.ok(newUserLock === userLock(server.app.id, userId), 'the turn holds the user lock');
      return magicLinks.create(turn, {
        appId: server.app.id,
        userId,
        expiresAt: turn.now + 86_400_000,
        redirectUrl,
        address: { kind: 'email', value: 'bob@example.com' },
        purpose: { kind: 'invite', groupId: GROUP_OPEN, inviteId },
      });
    });
  const kept = await invite('invite_1');
  const killed = await invite('invite_2');
  await runtime.run([newUserLock], (turn) => magicLinks.revoke(turn, killed.ref));

  const redeemed = await server.request('GET', linkPath(kept.link), { headers: { accept: 'application/json' } });
  t.equal(redeemed.status, 200);
  t.same(accepted, ['invite_1']);
  const profile = profileOf(server, redeemed.body.app_user_id);
  t.equal(profile.meta.last_sign_in_method, 'invite_link');
  t.same(profile.verified_data, { email: 'bob@example.com' });
  t.equal((await server.request('GET', linkPath(killed.link))).status, 410, 'a revoked invite link is dead');
  t.same(accepted, ['invite_1']);
  const relative = await invite('invite_3', '/groups/joined');
  const browser = await server.request('GET', linkPath(relative.link));
  t.equal(browser.status, 302);
  t.match(browser.headers.get('location'), `${server.deps.config.publicUrl}/groups/joined#access_token=`, 'a relative location is under the public URL');
  t.throws(() => magicLinks.purposes.register('invite', { method: 'invite_link', check() {}, locks: () => [], redeem() {} }));
});
