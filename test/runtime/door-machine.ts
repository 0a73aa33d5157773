import { assign, setup } from 'xstate';
import type { MachineRegistry } from '../../src/runtime/machines.js';

export interface DoorContext {
  name: string;
  opens: number;
  knocks: number;
}

/** A small machine for runtime tests: `door.lock` is refused unless the door is closed. */
export const doorMachine = setup({
  types: {
    context: {} as DoorContext,
    input: {} as { name: string },
    events: {} as
      | { type: 'door.open' }
      | { type: 'door.close' }
      | { type: 'door.lock' }
      | { type: 'door.unlock' }
      | { type: 'door.knock' },
  },
}).createMachine({
  id: 'door',
  context: ({ input }) => ({ name: input.name, opens: 0, knocks: 0 }),
  initial: 'closed',
  on: { 'door.knock': { actions: assign({ knocks: ({ context }) => context.knocks + 1 }) } },
  states: {
    closed: {
      on: {
        'door.open': { target: 'open', actions: assign({ opens: ({ context }) => context.opens + 1 }) },
        'door.lock': 'locked',
      },
    },
    open: { on: { 'door.close': 'closed' } },
    locked: { on: { 'door.unlock': 'closed' } },
  },
});

export const testMachines: MachineRegistry = { door: { machine: doorMachine, version: 1 } };
