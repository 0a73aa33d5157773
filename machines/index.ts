import type { MachineRegistry } from '../src/runtime/machines.js';
import { userMachine, USER_MACHINE_VERSION } from './user.machine.js';
import { groupMachine, GROUP_MACHINE_VERSION } from './group.machine.js';
import { memberMachine, MEMBER_MACHINE_VERSION } from './member.machine.js';
import { inviteMachine, INVITE_MACHINE_VERSION } from './invite.machine.js';

/** Every actor kind with its machine and snapshot version. */
export const machines: MachineRegistry = {
  user: { machine: userMachine, version: USER_MACHINE_VERSION },
  group: { machine: groupMachine, version: GROUP_MACHINE_VERSION },
  member: { machine: memberMachine, version: MEMBER_MACHINE_VERSION },
  invite: { machine: inviteMachine, version: INVITE_MACHINE_VERSION },
};
