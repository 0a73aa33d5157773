import type { MachineRegistry } from '../src/runtime/machines.js';

/** Every actor kind with its machine and snapshot version. */
export const machines: MachineRegistry = {};
