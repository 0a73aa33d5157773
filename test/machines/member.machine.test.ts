import t from 'tap';
import { createActor } from 'xstate';
import { restoreThroughMsgpack, restoredAlike } from '../helpers/machines.js';
import { memberMachine, type MemberEvent, type MemberState } from '../../machines/member.machine.js';

const AT = Date.parse('2026-01-01T00:00:00Z');
const start = (state: MemberState) =>
  createActor(memberMachine, {
    input: { appId: 'app_1', id: 'member_1', groupId: 'group_1', userId: 'user_1', roles: ['reader'], state, invitedBy: 'user:user_0', inviteId: 'invite_1', at: AT },
  }).start();

const accept: MemberEvent = { type: 'member.accept', at: AT + 1 };
const reject: MemberEvent = { type: 'member.reject', at: AT + 1 };
const setRoles: MemberEvent = { type: 'member.setRoles', roles: ['owner'], at: AT + 1 };

t.test('a member starts in the state it is created in', async (t) => {
  for (const state of ['active', 'invite_pending', 'invite_rejected'] as const) {
    const snapshot = start(state).getSnapshot();
    t.equal(snapshot.value, state);
    t.equal(snapshot.context.user_id, 'user_1');
    t.equal(snapshot.context.invited_by, 'user:user_0');
    t.notOk('added_by' in snapshot.context, 'absent parties stay absent');
  }
});

t.test('invite_pending → active only on member.accept', async (t) => {
  const actor = start('invite_pending');
  t.ok(actor.getSnapshot().can(accept));
  actor.send(accept);
  t.equal(actor.getSnapshot().value, 'active');
  t.equal(actor.getSnapshot().context.updated_at, '2026-01-01T00:00:00.001Z');
});

t.test('invite_pending → invite_rejected on member.reject, which is final', async (t) => {
  const actor = start('invite_pending');
  actor.send(reject);
  t.equal(actor.getSnapshot().value, 'invite_rejected');
  t.equal(actor.getSnapshot().status, 'done');
});

t.test('roles change while pending or active', async (t) => {
  for (const state of ['invite_pending', 'active'] as const) {
    const actor = start(state);
    t.ok(actor.getSnapshot().can(setRoles));
    actor.send(setRoles);
    t.same(actor.getSnapshot().context.roles, ['owner']);
    t.equal(actor.getSnapshot().value, state, 'a role change is no state change');
  }
});

t.test('every other event is refused', async (t) => {
  const refused: Array<[MemberState, MemberEvent]> = [
    ['active', accept],
    ['active', reject],
    ['invite_rejected', accept],
    ['invite_rejected', reject],
    ['invite_rejected', setRoles],
  ];
  for (const [state, event] of refused) {
    t.notOk(start(state).getSnapshot().can(event), `${event.type} in ${state}`);
  }
});

t.test('snapshots survive msgpack in every state', async (t) => {
  for (const state of ['active', 'invite_pending', 'invite_rejected'] as const) restoredAlike(t, memberMachine, start(state));
  const restored = restoreThroughMsgpack(memberMachine, start('invite_pending'));
  restored.send(accept);
  t.equal(restored.getSnapshot().value, 'active', 'a restored pending member can still accept');
});
