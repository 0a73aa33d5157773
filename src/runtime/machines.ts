import type { AnyStateMachine } from 'xstate';

/** A kind of actor: its machine and the version stored with each snapshot. */
export interface MachineDef {
  machine: AnyStateMachine;
  version: number;
  /** Moves a stored snapshot of an older version forward. */
  upgrade?: (snapshot: unknown, fromVersion: number) => unknown;
}

export type MachineRegistry = Readonly<Record<string, MachineDef>>;
