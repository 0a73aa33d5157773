import t, { type Test } from 'tap';
import { createActor, type Actor, type SnapshotFrom } from 'xstate';
import { restoredAlike } from '../helpers/machines.js';
import { persistedUser, userMachine, type UserEvent, type UserInput } from '../../machines/user.machine.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const input: UserInput = { appId: 'app_1', id: 'user_1', data: { user_id: 'user_1', email: 'a@example.com' }, attributes: {}, at: T0 };
const iso = (ms: number) => new Date(ms).toISOString();

const start = () => createActor(userMachine, { input }).start();

/** A disabled user's actor takes `user.enable` at `at`: enabled again, stamped modified. */
function enables(t: Test, actor: Actor<typeof userMachine>, at: number): void {
  actor.send({ type: 'user.enable', at });
  t.equal(actor.getSnapshot().value, 'enabled');
  t.equal(actor.getSnapshot().context.meta.modified, iso(at));
}

t.test('a new user is enabled, unverified, stamped with its creation time', async (t) => {
  const snapshot = start().getSnapshot();
  t.equal(snapshot.value, 'enabled');
  t.equal(snapshot.context.auth_level, 'unverified');
  t.same(snapshot.context.meta, { created: iso(T0), modified: iso(T0) });
  t.same(snapshot.context.verified_data, {});
});

t.test('updates replace data and attributes and stamp modified', async (t) => {
  const actor = start();
  actor.send({ type: 'user.update', data: { user_id: 'user_1', first_name: 'Ada' }, attributes: { 'a:b': ['c'] }, verified_data: {}, at: T0 + 5 });
  const { context } = actor.getSnapshot();
  t.same(context.data, { user_id: 'user_1', first_name: 'Ada' });
  t.same(context.attributes, { 'a:b': ['c'] });
  t.equal(context.meta.modified, iso(T0 + 5));
  t.equal(context.meta.created, iso(T0));
});

t.test('disabled users refuse sign-in, touch and disable; accept enable and update', async (t) => {
  const actor = start();
  actor.send({ type: 'user.disable', at: T0 + 1 });
  const disabled = actor.getSnapshot();
  t.equal(disabled.value, 'disabled');
  const refused: UserEvent[] = [
    { type: 'user.signIn', method: 'magic_link', at: T0 + 2 },
    { type: 'user.touch', at: T0 + 2 },
    { type: 'user.disable', at: T0 + 2 },
  ];
  for (const event of refused) t.notOk(disabled.can(event), `${event.type} is refused`);
  t.notOk(start().getSnapshot().can({ type: 'user.enable', at: T0 }), 'enabled users cannot be enabled');
  t.ok(disabled.can({ type: 'user.update', data: {}, attributes: {}, verified_data: {}, at: T0 + 2 }));
  t.ok(disabled.can({ type: 'user.revokeAll', at: T0 + 2 }));
  enables(t, actor, T0 + 3);
});

t.test('sign-in verifies addresses and stamps sign-in meta (modified only when it proves something new); touch only last_active', async (t) => {
  const actor = start();
  actor.send({ type: 'user.signIn', method: 'magic_link', verified: { email: 'a@example.com' }, at: T0 + 10 });
  actor.send({ type: 'user.signIn', method: 'refresh_token', at: T0 + 20 });
  actor.send({ type: 'user.touch', at: T0 + 30 });
  const { context } = actor.getSnapshot();
  t.equal(context.auth_level, 'verified');
  t.same(context.verified_data, { email: 'a@example.com' });
  t.match(context.meta, {
    first_sign_in: iso(T0 + 10),
    first_sign_in_method: 'magic_link',
    last_sign_in: iso(T0 + 20),
    last_sign_in_method: 'refresh_token',
    last_active: iso(T0 + 30),
    modified: iso(T0 + 10),
  });
});

t.test('revocations: a watermark for everything, expiring marks for sessions', async (t) => {
  const actor = start();
  actor.send({ type: 'user.revokeSession', sid: 's1', until: T0 + 100, at: T0 });
  actor.send({ type: 'user.revokeSession', sid: 's2', until: T0 + 1000, at: T0 + 1 });
  actor.send({ type: 'user.revokeSession', sid: 's3', until: T0 + 1000, at: T0 + 200 });
  t.same(actor.getSnapshot().context.revokedSessions.map((s) => s.sid), ['s2', 's3'], 'expired marks are dropped');
  actor.send({ type: 'user.revokeAll', at: T0 + 500 });
  t.equal(actor.getSnapshot().context.revokedBefore, T0 + 500);
  actor.send({ type: 'user.promptPasskey', prompted: iso(T0 + 7), at: T0 + 600 });
  t.equal(actor.getSnapshot().context.meta.last_passkey_registration_prompt, iso(T0 + 7));
});

t.test('a snapshot survives msgpack and restores an actor that behaves the same', async (t) => {
  const actor = start();
  actor.send({ type: 'user.update', data: { user_id: 'user_1', n: 1 }, attributes: { 'x:y': ['z'] }, verified_data: {}, at: T0 + 1 });
  actor.send({ type: 'user.disable', at: T0 + 2 });
  const restored = restoredAlike(t, userMachine, actor);
  t.notOk(restored.getSnapshot().can({ type: 'user.touch', at: T0 + 3 }), 'still refuses what a disabled user refuses');
  enables(t, restored, T0 + 4);
});

t.test('persistedUser is the snapshot XState persists, in either state, and restores the same actor', async (t) => {
  const actor = start();
  actor.send({ type: 'user.signIn', method: 'magic_link', verified: { email: 'a@example.com' }, at: T0 + 1 });
  actor.send({ type: 'user.revokeSession', sid: 'ses_1', until: T0 + 60_000, at: T0 + 2 });
  for (const event of [undefined, { type: 'user.disable', at: T0 + 3 } as const]) {
    if (event) actor.send(event);
    const { value, context } = actor.getSnapshot();
    // Through JSON: XState's own form carries `output` and `error` as undefined, which nothing stores.
    t.same(persistedUser(value, context), JSON.parse(JSON.stringify(actor.getPersistedSnapshot())), `when ${value}`);
    const restored = createActor(userMachine, { snapshot: persistedUser(value, context) as SnapshotFrom<typeof userMachine>, input }).start();
    t.same(restored.getSnapshot().context, context);
    t.equal(restored.getSnapshot().can({ type: 'user.touch', at: T0 + 4 }), value === 'enabled');
  }
});
