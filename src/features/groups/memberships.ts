import type { ActorRuntime, Turn } from '../../runtime/runtime.js';
import { HIGH_KEY, type Key } from '../../storage/store.js';
import { EXTERNAL_ID } from '../../lib/ids.js';
import type { ProfileViews } from '../users/profile-views.js';
import type { UserDirectory } from '../users/directory.js';
import type { GroupContext } from '../../../machines/group.machine.js';
import type { MemberContext } from '../../../machines/member.machine.js';
import { GROUP_KIND, MEMBER_KIND, groupKey } from './keys.js';
import { renderGroup, renderMember, type MemberView } from './render.js';

/** What one turn changed in a group, for its rendering and its members' entries in their profiles. */
export interface MembershipChange {
  /** Members created or changed. */
  members: Iterable<string>;
  /** Users whose member record was removed. */
  removedUsers: Iterable<string>;
}

/**
 * What profiles show of groups: the group rendered once (`group_views`), and each user's member in
 * the `user_groups` table `[appId, userId, groupId] → member`, which is also the index by which a
 * group finds the member of a user. Both are rendered inside the write transaction, after the
 * turn's staged writes, so they show exactly what is committed; the profile view of every user
 * whose member changed is rewritten in the same transaction. A change to the group alone (its
 * name, its `member_count`) rewrites only its own rendering, whatever its size.
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
    return this.profiles.memberships.get([appId, userId, groupId])?.id as string | undefined;
  }

  /** How many member records of a user are committed: a count of the user's own index range, whatever the number of groups. */
  countOf(appId: string, userId: string): number {
    return this.profiles.memberships.getCount({ start: [appId, userId, ''], end: [appId, userId, HIGH_KEY] });
  }

  /** Committed IDs of the groups in which a user has a member record. */
  groupIdsOf(appId: string, userId: string): string[] {
    if (!EXTERNAL_ID.test(userId)) return [];
    const keys = this.profiles.memberships.getKeys({ start: [appId, userId, ''], end: [appId, userId, HIGH_KEY] });
    return [...keys].map((key) => (key as Key[])[2] as string);
  }

  /** The committed rendering of a group, as profiles and `GET /me/groups` list it. */
  renderedGroup(appId: string, groupId: string): Record<string, unknown> | undefined {
    const bytes = this.profiles.groupRendering(appId, groupId);
    return bytes && JSON.parse(bytes.toString('utf8'));
  }

  /** Stages the group's rendering and its changed members' entries; call once per turn, after its last change to the group. */
  publish(turn: Turn, appId: string, groupId: string, change: MembershipChange): void {
    const removed = [...change.removedUsers];
    const changed = [...change.members];
    turn.derive(() => {
      for (const userId of removed) this.profiles.memberships.remove([appId, userId, groupId]);
      const group = this.runtime.read<GroupContext>(GROUP_KIND, groupKey(appId, groupId));
      if (!group) return;
      this.profiles.groupViews.put([appId, groupId], Buffer.from(JSON.stringify(renderGroup(group))));
      for (const memberId of changed) {
        const member: MemberView | undefined = this.runtime.read<MemberContext>(MEMBER_KIND, [appId, groupId, memberId]);
        if (member) this.profiles.memberships.put([appId, member.context.user_id, groupId], renderMember(member));
      }
    });
    const affected = new Set(removed);
    for (const memberId of changed) {
      const userId = this.userOf(turn, appId, groupId, memberId);
      if (userId) affected.add(userId);
    }
    for (const userId of affected) this.users.refreshGroup(turn, appId, userId, groupId);
  }

  /** Stages the removal of a deleted group's rendering and of every entry of its members. */
  forget(turn: Turn, appId: string, groupId: string, userIds: Iterable<string>): void {
    turn.del(this.profiles.groupViews, [appId, groupId]);
    for (const userId of userIds) {
      turn.del(this.profiles.memberships, [appId, userId, groupId]);
      this.users.refreshGroup(turn, appId, userId, groupId);
    }
  }

  private userOf(turn: Turn, appId: string, groupId: string, memberId: string): string | undefined {
    return turn.get<MemberContext>(MEMBER_KIND, [appId, groupId, memberId])?.context.user_id;
  }
}
