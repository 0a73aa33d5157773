import type { Turn } from '../../runtime/runtime.js';
import type { GroupsCore } from './core.js';
import { GroupEdit } from './edit.js';
import { groupLock } from './keys.js';
import { runHolding } from './locking.js';

/**
 * Runs `body` (which deletes the user) in a turn that first takes the user out of every group of
 * its app: its members go, with their pending invites and their profile entries. A deleted user may leave a
 * group without an active owner: the owner rule does not hold back a deletion.
 */
export function runRemovingUser<T>(
  core: GroupsCore,
  appId: string,
  userId: string,
  locks: readonly string[],
  body: (turn: Turn) => T,
): Promise<T> {
  const groupLocks = core.memberships.groupIdsOf(appId, userId).map((groupId) => groupLock(appId, groupId));
  return runHolding(core.runtime, [...locks, ...groupLocks], (turn, hold) => {
    for (const groupId of core.memberships.groupIdsOf(appId, userId)) {
      const edit = new GroupEdit(core, turn, hold, appId, groupId);
      const member = edit.memberOfUser(userId);
      if (member) edit.removeMember(member.context.id);
      edit.finish({ ownerRule: false });
    }
    return body(turn);
  });
}
