import type { Turn } from '../../runtime/runtime.js';
import { GROUP_BUSY, type GroupsCore } from './core.js';
import { GroupEdit } from './edit.js';
import { groupLock, inviteLock, memberLock } from './keys.js';
import { runHolding } from '../../runtime/holding.js';

/**
 * Runs `body` (which deletes the user) in a turn that first takes the user out of every group of
 * its app: its members go, with every invite made for it (pending or answered: a user re-created
 * under the same ID must not find them) and their links, and its profile entries. A deleted user
 * may leave a group without an active owner: the owner rule does not hold back a deletion.
 */
export function runRemovingUser<T>(
  core: GroupsCore,
  appId: string,
  userId: string,
  locks: readonly string[],
  body: (turn: Turn) => T,
): Promise<T> {
  return runHolding(core.runtime, [...locks, ...removalLocks(core, appId, userId)], (turn, hold) => {
    // Memberships and invites made while this turn queued are named all at once, so the next attempt
    // catches up with every one of them (the edits below would learn them one attempt at a time).
    hold(removalLocks(core, appId, userId));
    for (const [groupId, inviteIds] of recordsOf(core, appId, userId)) {
      const edit = new GroupEdit(core, turn, hold, appId, groupId);
      // A pending invite takes its pending member along.
      for (const inviteId of inviteIds) if (edit.invite(inviteId)) edit.removeInvite(inviteId);
      const member = edit.memberOfUser(userId);
      if (member) edit.removeMember(member.context.id);
      edit.finish({ ownerRule: false });
    }
    return body(turn);
  }, GROUP_BUSY);
}

/** The committed invites made for the user, by group, in every group where it has a member record or an invite. */
function recordsOf(core: GroupsCore, appId: string, userId: string): Map<string, string[]> {
  const byGroup = new Map<string, string[]>(core.memberships.groupIdsOf(appId, userId).map((groupId) => [groupId, []]));
  for (const { groupId, inviteId } of core.invites.ofUser(appId, userId)) {
    byGroup.set(groupId, [...(byGroup.get(groupId) ?? []), inviteId]);
  }
  return byGroup;
}

/**
 * The locks of taking the user out of its groups, read from what is committed: each group's, its
 * member's and those of the invites made for the user. Named as a whole because `runHolding` learns
 * of a missing lock one `hold` at a time, and a user in many groups needs many.
 */
function removalLocks(core: GroupsCore, appId: string, userId: string): string[] {
  return [...recordsOf(core, appId, userId)].flatMap(([groupId, inviteIds]) => {
    const memberId = core.memberships.memberIdOf(appId, userId, groupId);
    return [
      groupLock(appId, groupId),
      ...(memberId === undefined ? [] : [memberLock(appId, groupId, memberId)]),
      ...inviteIds.map((inviteId) => inviteLock(appId, groupId, inviteId)),
    ];
  });
}
