import type { MachineRegistry } from '../src/runtime/machines.js';
import { userMachine, USER_MACHINE_VERSION } from './user.machine.js';

/** Every actor kind with its machine and snapshot version. */
export const machines: MachineRegistry = {
  user: { machine: userMachine, version: USER_MACHINE_VERSION },
};
