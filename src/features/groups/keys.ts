import { actorLockKey, type ActorRuntime } from '../../runtime/runtime.js';
import { HIGH_KEY, type Key } from '../../storage/store.js';
import { validationError } from '../../lib/errors.js';

export const GROUP_KIND = 'group';
export const MEMBER_KIND = 'member';
export const INVITE_KIND = 'invite';

export const groupKey = (appId: string, groupId: string): Key[] => [appId, groupId];
/** Members and invites sort under their group, so a group's lists are prefix ranges. */
export const memberKey = (appId: string, groupId: string, memberId: string): Key[] => [appId, groupId, memberId];
export const inviteKey = (appId: string, groupId: string, inviteId: string): Key[] => [appId, groupId, inviteId];

/** Every turn that changes a group's members or invites holds this, so uniqueness rules cannot race. */
export const groupLock = (appId: string, groupId: string) => actorLockKey(GROUP_KIND, groupKey(appId, groupId));
export const memberLock = (appId: string, groupId: string, memberId: string) =>
  actorLockKey(MEMBER_KIND, memberKey(appId, groupId, memberId));
export const inviteLock = (appId: string, groupId: string, inviteId: string) =>
  actorLockKey(INVITE_KIND, inviteKey(appId, groupId, inviteId));

export const groupCountKey = (appId: string): Key => ['groups', appId];

export const OWNER_ROLE = 'owner';

/** Whether a member counts as an owner: active and holding `owner`. */
export const isActiveOwner = (member: { state: string; context: { roles: string[] } }) =>
  member.state === 'active' && member.context.roles.includes(OWNER_ROLE);

/**
 * Whether a member may see an invite: owners see every one, anyone else only the invites made for
 * it. To anyone else an invite answers as a missing one (404), so its existence cannot be probed.
 */
export const seesInvite = (member: Parameters<typeof isActiveOwner>[0], invite: { context: { ensured_user_id: string } }, userId: string) =>
  isActiveOwner(member) || invite.context.ensured_user_id === userId;

/** How many member records (any state) a user holds at most in one application: each shows in its profile. */
export const GROUPS_PER_USER_LIMIT = 1000;

/** How many roles a member or invite holds at most. */
export const ROLES_LIMIT = 50;

/**
 * `roles` with `owner` added (the first member of a group, and its invite, always hold it); 400 on
 * `roles` where that would make one more than ROLES_LIMIT, which a PUT sending them back would refuse.
 */
export function withOwner(roles: string[]): string[] {
  if (roles.includes(OWNER_ROLE)) return roles;
  if (roles.length >= ROLES_LIMIT) {
    throw validationError({ roles: [`at most ${ROLES_LIMIT} roles, owner included: the first member of a group, and its invite, also hold owner`] });
  }
  return [...roles, OWNER_ROLE];
}

/** Committed IDs of a group's members or invites (`kind`), in creation order. */
export function idsInGroup(runtime: ActorRuntime, kind: typeof MEMBER_KIND | typeof INVITE_KIND, appId: string, groupId: string): string[] {
  const keys = runtime.table(kind).getKeys({ start: [appId, groupId, ''], end: [appId, groupId, HIGH_KEY] });
  return [...keys].map((key) => (key as Key[])[2] as string);
}
