import type { Turn } from '../../runtime/runtime.js';
import type { GroupsCore } from './core.js';
import { GroupEdit } from './edit.js';
import { MEMBER_KIND, groupLock, inviteLock, memberKey, memberLock } from './keys.js';
import type { MemberContext } from '../../../machines/member.machine.js';
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
  return runHolding(core.runtime, [...locks, ...removalLocks(core, appId, userId)], (turn, hold) => {
    // Memberships made while this turn queued are named all at once, so the next attempt catches up
    // with every one of them (the edits below would learn them one attempt at a time).
    hold(removalLocks(core, appId, userId));
    for (const groupId of core.memberships.groupIdsOf(appId, userId)) {
      const edit = new GroupEdit(core, turn, hold, appId, groupId);
      const member = edit.memberOfUser(userId);
      if (member) edit.removeMember(member.context.id);
      edit.finish({ ownerRule: false });
    }
    return body(turn);
  });
}

/**
 * The locks of taking the user out of its groups, read from what is committed: each group's, its
 * member's and that member's pending invite's. Named as a whole because `runHolding` learns of a
 * missing lock one `hold` at a time, and a user in many groups needs many.
 */
function removalLocks(core: GroupsCore, appId: string, userId: string): string[] {
  return core.memberships.groupIdsOf(appId, userId).flatMap((groupId) => {
    const memberId = core.memberships.memberIdOf(appId, userId, groupId);
    const member = memberId === undefined ? undefined : core.runtime.read<MemberContext>(MEMBER_KIND, memberKey(appId, groupId, memberId));
    const inviteId = member?.context.invite_id;
    return [
      groupLock(appId, groupId),
      ...(memberId === undefined ? [] : [memberLock(appId, groupId, memberId)]),
      ...(inviteId === undefined ? [] : [inviteLock(appId, groupId, inviteId)]),
    ];
  });
}
