import { conflict, forbidden, limitReached, notFound } from '../../lib/errors.js';
import { stampForUser, userLock } from '../users/directory.js';
import type { Turn } from '../../runtime/runtime.js';
import type { GroupContext, GroupEvent, GroupTally } from '../../../machines/group.machine.js';
import type { MemberContext, MemberEvent, MemberInput } from '../../../machines/member.machine.js';
import type { InviteContext, InviteEvent, InviteInput } from '../../../machines/invite.machine.js';
import type { Hold } from '../../runtime/holding.js';
import type { GroupMemberships } from './memberships.js';
import type { InviteIndex } from './invite-index.js';
import type { InviteLinks } from './invite-links.js';
import {
  GROUP_KIND,
  INVITE_KIND,
  MEMBER_KIND,
  groupKey,
  groupLock,
  inviteKey,
  inviteLock,
  memberKey,
  memberLock,
  withOwner,
  isActiveOwner,
  GROUPS_PER_USER_LIMIT,
} from './keys.js';
import type { GroupView, InviteView, MemberView } from './render.js';

const NO_CHANGE: GroupTally = { active: 0, owners: 0, members: 0, invites: 0 };

/** What one member adds to its group's totals. */
function tallyOf(member: MemberView | undefined): GroupTally {
  if (!member) return NO_CHANGE;
  const active = member.state === 'active' ? 1 : 0;
  return { active, owners: isActiveOwner(member) ? 1 : 0, members: 1, invites: 0 };
}

interface GroupEditDeps {
  memberships: GroupMemberships;
  invites: InviteIndex;
  links: InviteLinks;
}

export type NewMember = Omit<MemberInput, 'appId' | 'id' | 'groupId' | 'at'>;
export type NewInvite = Omit<InviteInput, 'appId' | 'id' | 'groupId' | 'at'>;

/**
 * The changes one turn makes to one group, holding the group's lock: members and invites move
 * through their machines, the group's totals follow each change, the last-owner rule is checked
 * on the outcome, and `finish` stages the totals and what profiles show of the group and its members.
 */
export class GroupEdit {
  private readonly delta: GroupTally = { ...NO_CHANGE };
  private readonly changedMembers = new Set<string>();
  private readonly removedUsers = new Set<string>();
  /** Members created in this turn, by user: not yet in the committed user → member index. */
  private readonly createdFor = new Map<string, string>();
  group: GroupView;

  constructor(
    private readonly deps: GroupEditDeps,
    readonly turn: Turn,
    readonly hold: Hold,
    readonly appId: string,
    readonly groupId: string,
  ) {
    hold([groupLock(appId, groupId)]);
    const group = turn.get<GroupContext>(GROUP_KIND, groupKey(appId, groupId));
    if (!group) throw notFound('group', groupId);
    this.group = group;
  }

  /** No member record of any state yet: the one made now gets `owner` (ADDENDUM §5). */
  get isEmpty(): boolean {
    return this.group.context.tally.members + this.delta.members === 0;
  }

  updateGroup(event: Extract<GroupEvent, { type: 'group.update' }>): GroupView {
    this.group = this.turn.send<GroupContext>(GROUP_KIND, groupKey(this.appId, this.groupId), event);
    return this.group;
  }

  /** The member of a user in this group, as this turn leaves it. */
  memberOfUser(userId: string): MemberView | undefined {
    const memberId = this.createdFor.get(userId) ?? this.deps.memberships.memberIdOf(this.appId, userId, this.groupId);
    return memberId === undefined ? undefined : this.member(memberId);
  }

  member(memberId: string): MemberView | undefined {
    return this.turn.get<MemberContext>(MEMBER_KIND, memberKey(this.appId, this.groupId, memberId));
  }

  requireMember(memberId: string): MemberView {
    const member = this.member(memberId);
    if (!member) throw notFound('member', memberId);
    return member;
  }

  invite(inviteId: string): InviteView | undefined {
    return this.turn.get<InviteContext>(INVITE_KIND, inviteKey(this.appId, this.groupId, inviteId));
  }

  requireInvite(inviteId: string): InviteView {
    const invite = this.invite(inviteId);
    if (!invite) throw notFound('invite', inviteId);
    return invite;
  }

  /** 404 unless `userId` has a member here (any state): a group is visible only to its members. */
  requireVisibleTo(userId: string): MemberView {
    const member = this.memberOfUser(userId);
    if (!member) throw notFound('group', this.groupId);
    return member;
  }

  /** 403 unless `userId` is an active member holding `owner`. */
  requireOwner(userId: string): MemberView {
    const member = this.requireVisibleTo(userId);
    if (!isActiveOwner(member)) {
      throw forbidden('Only an owner of the group may do this');
    }
    return member;
  }

  /**
   * Creates the member of a user; 409 `E_MEMBER_EXISTS` if it has one. The first gets `owner`. 400
   * `E_VALIDATION` on `userField` (the body field that named the user, if any) when the user holds
   * GROUPS_PER_USER_LIMIT member records already.
   */
  addMember(memberId: string, input: NewMember, userField?: string): MemberView {
    if (this.memberOfUser(input.userId)) throw conflict('E_MEMBER_EXISTS', `User ${input.userId} is already a member of this group`);
    this.hold([memberLock(this.appId, this.groupId, memberId)]);
    this.requireRoomFor(input.userId, userField);
    const roles = this.isEmpty ? withOwner(input.roles) : input.roles;
    const member = this.turn.create<MemberContext>(MEMBER_KIND, memberKey(this.appId, this.groupId, memberId), {
      ...input,
      roles,
      appId: this.appId,
      id: memberId,
      groupId: this.groupId,
      at: this.turn.now,
    } satisfies MemberInput);
    this.createdFor.set(input.userId, memberId);
    this.track(undefined, member);
    return member;
  }

  sendMember(memberId: string, event: MemberEvent): MemberView {
    this.hold([memberLock(this.appId, this.groupId, memberId)]);
    const before = this.requireMember(memberId);
    const after = this.turn.send<MemberContext>(MEMBER_KIND, memberKey(this.appId, this.groupId, memberId), event);
    this.track(before, after);
    return after;
  }

  /** Removes a member; a pending invite that made it goes too (with its link). */
  removeMember(memberId: string): void {
    this.hold([memberLock(this.appId, this.groupId, memberId)]);
    const member = this.requireMember(memberId);
    const inviteId = member.context.invite_id;
    if (inviteId !== undefined && this.invite(inviteId)?.state === 'pending') this.removeInvite(inviteId, false);
    this.turn.remove(MEMBER_KIND, memberKey(this.appId, this.groupId, memberId));
    this.track(member, undefined);
    this.changedMembers.delete(memberId);
    this.removedUsers.add(member.context.user_id);
    if (this.createdFor.get(member.context.user_id) === memberId) this.createdFor.delete(member.context.user_id);
  }

  addInvite(inviteId: string, input: NewInvite): InviteView {
    this.hold([inviteLock(this.appId, this.groupId, inviteId)]);
    const invite = this.turn.create<InviteContext>(INVITE_KIND, inviteKey(this.appId, this.groupId, inviteId), {
      ...input,
      appId: this.appId,
      id: inviteId,
      groupId: this.groupId,
      at: stampForUser(this.turn, this.appId, input.ensuredUserId),
    } satisfies InviteInput);
    this.deps.invites.add(this.turn, invite);
    this.delta.invites += 1;
    return invite;
  }

  sendInvite(inviteId: string, event: InviteEvent): InviteView {
    this.hold([inviteLock(this.appId, this.groupId, inviteId)]);
    this.requireInvite(inviteId);
    return this.turn.send<InviteContext>(INVITE_KIND, inviteKey(this.appId, this.groupId, inviteId), event);
  }

  /** Removes an invite and kills its link; a pending one takes its pending member along unless told not to. */
  removeInvite(inviteId: string, withMember = true): void {
    this.hold([inviteLock(this.appId, this.groupId, inviteId)]);
    const invite = this.requireInvite(inviteId);
    this.turn.remove(INVITE_KIND, inviteKey(this.appId, this.groupId, inviteId));
    this.deps.invites.remove(this.turn, invite);
    this.deps.links.kill(this.turn, invite);
    this.delta.invites -= 1;
    const memberId = invite.context.member_id;
    if (withMember && invite.state === 'pending' && this.member(memberId)?.state === 'invite_pending') {
      this.removeMember(memberId);
    }
  }

  /** Removes the group with every member and invite: no owner rule holds for a group that goes. */
  deleteGroup(memberIds: string[], inviteIds: string[]): void {
    this.hold([
      ...memberIds.map((id) => memberLock(this.appId, this.groupId, id)),
      ...inviteIds.map((id) => inviteLock(this.appId, this.groupId, id)),
    ]);
    for (const inviteId of inviteIds) this.removeInvite(inviteId, false);
    const users = memberIds.map((memberId) => {
      const member = this.requireMember(memberId);
      this.turn.remove(MEMBER_KIND, memberKey(this.appId, this.groupId, memberId));
      return member.context.user_id;
    });
    this.deps.memberships.forget(this.turn, this.appId, this.groupId, users);
    this.turn.remove(GROUP_KIND, groupKey(this.appId, this.groupId));
  }

  /**
   * Stages the group's new totals and what profiles show of the group and its changed members. 409 `E_LAST_OWNER` when the turn would
   * leave a group that had an active owner without one (unless `ownerRule` is off: a user deleted).
   */
  finish(options: { ownerRule: boolean } = { ownerRule: true }): GroupView {
    const owners = this.group.context.tally.owners;
    if (options.ownerRule && owners > 0 && owners + this.delta.owners <= 0) {
      throw conflict('E_LAST_OWNER', 'The last owner of a group cannot be removed or lose the owner role');
    }
    if (Object.values(this.delta).some((n) => n !== 0)) {
      const tally: GroupEvent = { type: 'group.tally', delta: this.delta };
      this.group = this.turn.send<GroupContext>(GROUP_KIND, groupKey(this.appId, this.groupId), tally);
    }
    this.deps.memberships.publish(this.turn, this.appId, this.groupId, {
      members: this.changedMembers,
      removedUsers: this.removedUsers,
    });
    return this.group;
  }

  /**
   * The user's lock serializes every turn that adds a member record of the user, so the committed
   * count cannot be passed by two at once. A record replacing the user's committed one in this group
   * (an invite after a rejection) is no new one.
   */
  private requireRoomFor(userId: string, userField: string | undefined): void {
    this.hold([userLock(this.appId, userId)]);
    const { memberships } = this.deps;
    if (memberships.memberIdOf(this.appId, userId, this.groupId) !== undefined) return;
    if (memberships.countOf(this.appId, userId) < GROUPS_PER_USER_LIMIT) return;
    throw limitReached(
      `the user belongs to ${GROUPS_PER_USER_LIMIT} groups of this application, the most it may: remove one of its member records first`,
      userField,
    );
  }

  private track(before: MemberView | undefined, after: MemberView | undefined): void {
    const [was, now] = [tallyOf(before), tallyOf(after)];
    for (const key of Object.keys(this.delta) as Array<keyof GroupTally>) this.delta[key] += now[key] - was[key];
    if (after) this.changedMembers.add(after.context.id);
  }
}
