import { createActor, type Actor, type AnyMachineSnapshot, type AnyStateMachine } from 'xstate';
import { pack, unpack } from 'msgpackr';
import type { Test } from 'tap';

/** The actor's persisted snapshot packed with msgpack, unpacked and started again: what a restart does. */
export function restoreThroughMsgpack<M extends AnyStateMachine>(machine: M, actor: Actor<M>): Actor<M> {
  const snapshot = unpack(pack(actor.getPersistedSnapshot()));
  return createActor(machine as AnyStateMachine, { snapshot }).start() as Actor<M>;
}

/** `restoreThroughMsgpack`, checking that the restored actor is in the actor's state with its context. */
export function restoredAlike<M extends AnyStateMachine>(t: Test, machine: M, actor: Actor<M>): Actor<M> {
  const restored = restoreThroughMsgpack(machine, actor);
  const [before, after] = [actor, restored].map((a): AnyMachineSnapshot => a.getSnapshot());
  t.equal(after.value, before.value, `restored in state ${JSON.stringify(before.value)}`);
  t.same(after.context, before.context, 'with the same context');
  return restored;
}
