import t from 'tap';
import { createActor } from 'xstate';
import { restoredAlike } from '../helpers/machines.js';
import { groupMachine, type GroupEvent } from '../../machines/group.machine.js';

const AT = Date.parse('2026-01-01T00:00:00Z');
const input = { appId: 'app_1', id: 'group_1', name: 'Crew', admission_policy: 'invite_only' as const, meta: { a: 1 }, by: 'user_1', at: AT };

const start = () => createActor(groupMachine, { input }).start();

t.test('a new group is active with zero totals and its creator stamped', async (t) => {
  const snapshot = start().getSnapshot();
  t.equal(snapshot.value, 'active');
  t.same(snapshot.context.tally, { active: 0, owners: 0, members: 0, invites: 0 });
  t.equal(snapshot.context.created_at, '2026-01-01T00:00:00.000Z');
  t.equal(snapshot.context.created_by, 'user_1');
  t.equal(snapshot.context.updated_by, 'user_1');
});

t.test('group.update replaces name, policy and meta and stamps the change', async (t) => {
  const actor = start();
  const event: GroupEvent = { type: 'group.update', name: 'Band', admission_policy: 'open', meta: {}, by: 'app:app_1', at: AT + 1000 };
  t.ok(actor.getSnapshot().can(event));
  actor.send(event);
  const { context } = actor.getSnapshot();
  t.equal(context.name, 'Band');
  t.equal(context.admission_policy, 'open');
  t.same(context.meta, {});
  t.equal(context.updated_at, '2026-01-01T00:00:01.000Z');
  t.equal(context.updated_by, 'app:app_1');
  t.equal(context.created_at, '2026-01-01T00:00:00.000Z');
});

t.test('group.tally moves totals and is refused when one would go below zero', async (t) => {
  const actor = start();
  actor.send({ type: 'group.tally', delta: { active: 1, owners: 1, members: 1 } });
  actor.send({ type: 'group.tally', delta: { invites: 2 } });
  t.same(actor.getSnapshot().context.tally, { active: 1, owners: 1, members: 1, invites: 2 });
  const refused: GroupEvent = { type: 'group.tally', delta: { owners: -2 } };
  t.notOk(actor.getSnapshot().can(refused), 'owners would be -1');
  t.notOk(actor.getSnapshot().can({ type: 'group.tally', delta: { invites: -3 } }));
  t.ok(actor.getSnapshot().can({ type: 'group.tally', delta: { active: -1, owners: -1, members: -1, invites: -2 } }));
});

t.test('a snapshot survives msgpack and restores to an actor that goes on', async (t) => {
  const actor = start();
  actor.send({ type: 'group.tally', delta: { active: 2, members: 3 } });
  const restored = restoredAlike(t, groupMachine, actor);
  restored.send({ type: 'group.tally', delta: { active: -1 } });
  t.equal(restored.getSnapshot().context.tally.active, 1);
});
