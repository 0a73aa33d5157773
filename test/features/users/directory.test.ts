import t from 'tap';
import { startServer } from '../../helpers/server.js';
import { userLock } from '../../../src/features/users/directory.js';

t.test('users are created, changed and found by address, with views and counts in step', async (t) => {
  const server = await startServer(t);
  const { users, runtime, profiles } = server.deps;
  const appId = server.app.id;

  const plan = users.planEnsure(appId, { email: 'Ada@Example.com ' });
  const first = await runtime.run(plan.locks, (turn) => plan.apply(turn, { first_name: 'Ada' }));
  t.equal(first.created, true);
  t.same(users.findByAddress(appId, 'email', 'ada@example.COM'), [first.userId]);
  t.equal(users.count(appId), 1);

  const again = users.planEnsure(appId, { email: 'ada@example.com' });
  const second = await runtime.run(again.locks, (turn) => again.apply(turn));
  t.same(second, { userId: first.userId, created: false }, 'the same address finds the same user');

  const view = JSON.parse(Buffer.from(profiles.platformBytes(appId, first.userId)!).toString());
  t.equal(view.svc_user, first.userId);
  t.same(view.data, { first_name: 'Ada', email: 'Ada@Example.com', user_id: first.userId });
  t.equal(view.state, 'enabled');

  await runtime.run([userLock(appId, first.userId)], (turn) =>
    users.update(turn, appId, first.userId, { data: { user_id: first.userId, email: 'new@example.com' }, attributes: {} }),
  );
  t.same(users.findByAddress(appId, 'email', 'ada@example.com'), [], 'the old address is unindexed');
  t.same(users.findByAddress(appId, 'email', 'NEW@example.com'), [first.userId]);

  await runtime.run([userLock(appId, first.userId)], (turn) =>
    users.change(turn, appId, first.userId, { type: 'user.disable', at: turn.now }),
  );
  const refused = runtime.run([userLock(appId, first.userId)], (turn) =>
    users.change(turn, appId, first.userId, { type: 'user.signIn', method: 'magic_link', at: turn.now }),
  );
  await t.rejects(refused, { status: 409, code: 'E_INVALID_STATE_TRANSITION' });
  t.equal(users.require(appId, first.userId).state, 'disabled');
  const disabledView = JSON.parse(Buffer.from(profiles.platformBytes(appId, first.userId)!).toString());
  t.equal(disabledView.state, 'disabled');

  await runtime.run([userLock(appId, first.userId)], (turn) => users.remove(turn, appId, first.userId));
  t.equal(users.get(appId, first.userId), undefined);
  t.equal(profiles.platformBytes(appId, first.userId), undefined);
  t.equal(users.count(appId), 0);
  t.same(users.findByAddress(appId, 'email', 'new@example.com'), []);
});

t.test('each address field moves its own lookup; a change that leaves the addresses alone keeps them all', async (t) => {
  const server = await startServer(t);
  const { users, runtime } = server.deps;
  const appId = server.app.id;
  const find = (kind: 'email' | 'phone', value: string) => users.findByAddress(appId, kind, value);
  const update = (userId: string, data: Record<string, unknown>) =>
    runtime.run([userLock(appId, userId)], (turn) =>
      users.update(turn, appId, userId, { data: { user_id: userId, ...data }, attributes: {} }),
    );

  const plan = users.planEnsure(appId, { email: 'grace@example.com' });
  const { userId } = await runtime.run(plan.locks, (turn) => plan.apply(turn, { phone_number: '+1 555 0001' }));
  t.same(find('phone', '+15550001'), [userId]);

  await update(userId, { email: 'grace@example.com', phone_number: '+1 555 0002' });
  t.same(find('phone', '+15550001'), [], 'the old phone number is unindexed');
  t.same(find('phone', '+15550002'), [userId]);
  t.same(find('email', 'grace@example.com'), [userId], 'the email stays');

  await runtime.run([userLock(appId, userId)], (turn) =>
    users.change(turn, appId, userId, { type: 'user.signIn', method: 'magic_link', verified: { email: 'proven@example.com' }, at: turn.now }),
  );
  t.same(find('email', 'proven@example.com'), [userId], 'a verified address is indexed');

  await update(userId, { email: 'grace@example.com', phone_number: '+1 555 0002', first_name: 'Grace' });
  t.same(
    [find('email', 'grace@example.com'), find('phone', '+15550002'), find('email', 'proven@example.com')],
    [[userId], [userId], [userId]],
    'a change to other fields keeps every address',
  );

  await update(userId, { phone_number: '+1 555 0002', first_name: 'Grace' });
  t.same(find('email', 'grace@example.com'), [], 'dropping the email unindexes it');
  t.same(find('email', 'proven@example.com'), [userId], 'the verified one stays');
});
