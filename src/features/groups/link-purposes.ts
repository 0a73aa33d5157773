import { conflict, invalidTransition, notFound, validationError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { LinkFacts, LinkPurposes } from '../magic-links/purposes.js';
import type { GroupContext } from '../../../machines/group.machine.js';
import type { InviteContext } from '../../../machines/invite.machine.js';
import type { GroupsCore } from './core.js';
import { GroupEdit } from './edit.js';
import { answerInvite, answerLocks } from './invite-service.js';
import { GROUP_KIND, INVITE_KIND, groupKey, groupLock, inviteKey, memberLock } from './keys.js';
import type { Hold } from './locking.js';

/** The redemption turn holds every lock its handler named up front: nothing more can be asked for. */
const heldUpFront: Hold = () => {};

/**
 * What redeeming a group link does, in the same turn that signs the user in:
 * `invite` accepts the invite (invite `accepted`, member `active`); `join_group` makes the user an
 * active member of an `open` group (nothing when it already has a member record there).
 */
export function registerGroupLinkPurposes(purposes: LinkPurposes, core: GroupsCore): void {
  purposes.register('invite', {
    method: 'invite_link',
    check(turn, { appId, purpose }) {
      const invite = turn.get<InviteContext>(INVITE_KIND, inviteKey(appId, purpose.groupId, purpose.inviteId));
      if (!invite) throw notFound('invite', purpose.inviteId);
      if (invite.state !== 'pending') throw invalidTransition(invite.state, 'invite.accept');
    },
    locks: ({ appId, purpose }) => [groupLock(appId, purpose.groupId), ...answerLocks(core, appId, purpose.groupId, purpose.inviteId)],
    redeem(turn, { appId, userId, purpose }) {
      answerInvite(new GroupEdit(core, turn, heldUpFront, appId, purpose.groupId), purpose.inviteId, userId, 'accept');
    },
  });

  // The joining member's ID must be locked before the turn starts, so `locks` picks it; the redemption
  // hands `redeem` the very facts object it gave `locks`, which finds the ID again here.
  const joiningMember = new WeakMap<LinkFacts<'join_group'>, string>();
  purposes.register('join_group', {
    method: 'magic_link',
    check(turn, { appId, purpose }) {
      const group = turn.get<GroupContext>(GROUP_KIND, groupKey(appId, purpose.groupId));
      if (!group) throw validationError({ group_to_join: ['no such group'] });
      if (group.context.admission_policy !== 'open') throw validationError({ group_to_join: ['the group must be open'] });
    },
    locks(link) {
      const memberId = newId('member');
      joiningMember.set(link, memberId);
      return [groupLock(link.appId, link.purpose.groupId), memberLock(link.appId, link.purpose.groupId, memberId)];
    },
    redeem(turn, link) {
      const memberId = joiningMember.get(link);
      if (memberId === undefined) throw new TypeError('join_group redeemed without its locks');
      const edit = new GroupEdit(core, turn, heldUpFront, link.appId, link.purpose.groupId);
      if (edit.group.context.admission_policy !== 'open') throw conflict('E_GROUP_NOT_OPEN', 'The group is no longer open');
      if (edit.memberOfUser(link.userId)) return;
      edit.addMember(memberId, { userId: link.userId, roles: [], state: 'active', addedBy: `user:${link.userId}` });
      edit.finish();
    },
  });
}
