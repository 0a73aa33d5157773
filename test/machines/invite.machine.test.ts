import t from 'tap';
import { createActor } from 'xstate';
import { restoreThroughMsgpack, restoredAlike } from '../helpers/machines.js';
import { inviteMachine, type InviteEvent, type InviteInput } from '../../machines/invite.machine.js';

const AT = Date.parse('2026-01-01T00:00:00Z');
const base: InviteInput = {
  appId: 'app_1',
  id: 'invite_1',
  groupId: 'group_1',
  roles: ['reader'],
  first: false,
  target: { email: 'ada@example.com' },
  redirectUrl: '/welcome',
  ensuredUserId: 'user_1',
  memberId: 'member_1',
  by: 'user:user_0',
  at: AT,
};
const start = (input: Partial<InviteInput> = {}) => createActor(inviteMachine, { input: { ...base, ...input } }).start();
const inState = (state: 'pending' | 'accepted' | 'rejected') => {
  const actor = start();
  if (state === 'accepted') actor.send({ type: 'invite.accept', by: 'user_1', at: AT + 1 });
  if (state === 'rejected') actor.send({ type: 'invite.reject', at: AT + 1 });
  return actor;
};

const update: InviteEvent = { type: 'invite.update', roles: ['writer'], app_variant_id: 'web' };
const accept: InviteEvent = { type: 'invite.accept', by: 'user_1', at: AT + 2 };
const reject: InviteEvent = { type: 'invite.reject', at: AT + 2 };

t.test('a new invite is pending and records its target', async (t) => {
  const { value, context } = start().getSnapshot();
  t.equal(value, 'pending');
  t.equal(context.email, 'ada@example.com');
  t.equal(context.user_lookup_value, 'ada@example.com');
  t.equal(context.ensured_user_id, 'user_1');
  t.equal(context.created_at, '2026-01-01T00:00:00.000Z');
  const byId = start({ target: { user_id: 'user_1' } }).getSnapshot().context;
  t.equal(byId.user_id, 'user_1');
  t.notOk('user_lookup_value' in byId, 'a user ID is no lookup value');
});

t.test('pending → accepted records who accepted; final', async (t) => {
  const actor = start();
  actor.send(accept);
  t.equal(actor.getSnapshot().value, 'accepted');
  t.equal(actor.getSnapshot().context.accepted_by, 'user_1');
  t.equal(actor.getSnapshot().status, 'done');
});

t.test('pending → rejected; final', async (t) => {
  const actor = start();
  actor.send(reject);
  t.equal(actor.getSnapshot().value, 'rejected');
  t.equal(actor.getSnapshot().status, 'done');
});

t.test('invite.update replaces roles and options while pending', async (t) => {
  const actor = start();
  actor.send(update);
  const { context, value } = actor.getSnapshot();
  t.equal(value, 'pending');
  t.same(context.roles, ['writer']);
  t.equal(context.app_variant_id, 'web');
  t.equal(context.redirect_url, undefined, 'an omitted redirect_url is cleared');
});

t.test('accepted and rejected invites refuse every event', async (t) => {
  for (const state of ['accepted', 'rejected'] as const) {
    for (const event of [update, accept, reject]) {
      t.notOk(inState(state).getSnapshot().can(event), `${event.type} in ${state}`);
    }
  }
});

t.test('snapshots survive msgpack in every state', async (t) => {
  for (const state of ['pending', 'accepted', 'rejected'] as const) restoredAlike(t, inviteMachine, inState(state));
  const restored = restoreThroughMsgpack(inviteMachine, inState('pending'));
  restored.send(accept);
  t.equal(restored.getSnapshot().value, 'accepted', 'a restored pending invite can still be accepted');
});
