import type { ActorRuntime, Turn } from '../../runtime/runtime.js';
import { HIGH_KEY, type Key } from '../../storage/store.js';
import { EXTERNAL_ID } from '../../lib/ids.js';
import type { ProfileViews } from '../users/profile-views.js';
import type { UserDirectory } from '../users/directory.js';
import type { GroupContext } from '../../../machines/group.machine.js';
import type { MemberContext } from '../../../machines/member.machine.js';
import { GROUP_KIND, MEMBER_KIND, groupKey, idsInGroup } from './keys.js';
import { renderGroup, renderMember, type MemberView } from './render.js';

/** What one turn changed in a group, for the `{group, member}` pairs of its users' profiles. */
export interface MembershipChange {
  /** The group itself changed as profiles show it (name, policy, meta, member_count): every pair. */
  everyone: boolean;
  /** Members created or changed. */
  members: Iterable<string>;
  /** Users whose member record was removed. */
  removedUsers: Iterable<string>;
}

/**
 * The `user_groups` table `[appId, userId, groupId] → {group, member}`: each user's memberships as
 * its profile lists them, and the index by which a group finds the member of a user. Pairs are
 * rendered inside the write transaction, after the turn's staged writes, so they show exactly what
 * is committed; every affected user's profile view is rewritten in the same transaction.
 */
export class GroupMemberships {
  constructor(
    private readonly runtime: ActorRuntime,
    private readonly profiles: ProfileViews,
    private readonly users: UserDirectory,
  ) {}

  get table() {
    return this.profiles.memberships;
  }

  /** The committed member ID of a user in a group. */
  memberIdOf(appId: string, userId: string, groupId: string): string | undefined {
    return this.profiles.memberships.get([appId, userId, groupId])?.member.id as string | undefined;
  }

  /** Committed IDs of the groups in which a user has a member record. */
  groupIdsOf(appId: string, userId: string): string[] {
    if (!EXTERNAL_ID.test(userId)) return [];
    const keys = this.profiles.memberships.getKeys({ start: [appId, userId, ''], end: [appId, userId, HIGH_KEY] });
    return [...keys].map((key) => (key as Key[])[2] as string);
  }

  /** Stages the pairs of a group change; call once per turn, after its last change to the group. */
  publish(turn: Turn, appId: string, groupId: string, change: MembershipChange): void {
    const removed = [...change.removedUsers];
    const changed = [...change.members];
    const members = change.everyone ? [...new Set([...idsInGroup(this.runtime, MEMBER_KIND, appId, groupId), ...changed])] : changed;
    turn.derive(() => {
      for (const userId of removed) this.profiles.memberships.remove([appId, userId, groupId]);
      const group = this.runtime.read<GroupContext>(GROUP_KIND, groupKey(appId, groupId));
      for (const memberId of members) {
        const member: MemberView | undefined = this.runtime.read<MemberContext>(MEMBER_KIND, [appId, groupId, memberId]);
        if (!group || !member) continue;
        this.profiles.memberships.put([appId, member.context.user_id, groupId], {
          group: renderGroup(group),
          member: renderMember(member),
        });
      }
    });
    const affected = new Set(removed);
    for (const memberId of members) {
      const userId = this.userOf(turn, appId, groupId, memberId);
      if (userId) affected.add(userId);
    }
    for (const userId of affected) this.users.refreshView(turn, appId, userId);
  }

  /** Stages the removal of every pair of a deleted group. */
  forget(turn: Turn, appId: string, groupId: string, userIds: Iterable<string>): void {
    for (const userId of userIds) {
      turn.del(this.profiles.memberships, [appId, userId, groupId]);
      this.users.refreshView(turn, appId, userId);
    }
  }

  private userOf(turn: Turn, appId: string, groupId: string, memberId: string): string | undefined {
    return turn.get<MemberContext>(MEMBER_KIND, [appId, groupId, memberId])?.context.user_id;
  }
}
