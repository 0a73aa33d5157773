import { createActor, type Actor, type AnyStateMachine } from 'xstate';
import { pack, unpack } from 'msgpackr';

/** The actor's persisted snapshot packed with msgpack, unpacked and started again: what a restart does. */
export function restoreThroughMsgpack<M extends AnyStateMachine>(machine: M, actor: Actor<M>): Actor<M> {
  const snapshot = unpack(pack(actor.getPersistedSnapshot()));
  return createActor(machine as AnyStateMachine, { snapshot }).start() as Actor<M>;
}
