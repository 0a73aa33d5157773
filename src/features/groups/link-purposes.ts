import { conflict, invalidTransition, linkExpired, notFound, validationError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { Turn } from '../../runtime/runtime.js';
import type { HandledKind, LinkFacts, LinkPurposes, PurposeHandler } from '../magic-links/purposes.js';
import type { GroupContext } from '../../../machines/group.machine.js';
import type { InviteContext } from '../../../machines/invite.machine.js';
import type { GroupsCore } from './core.js';
import { GroupEdit } from './edit.js';
import { answerInvite, answerLocks } from './invite-service.js';
import { GROUP_KIND, INVITE_KIND, groupKey, groupLock, inviteKey, memberLock } from './keys.js';
import { fixedHold, type Hold } from '../../runtime/holding.js';

/** A purpose handler whose redemption body is handed the hold of its turn. */
export type HoldingHandler<K extends HandledKind> = Omit<PurposeHandler<K>, 'redeem'> & {
  redeem(turn: Turn, link: LinkFacts<K>, hold: Hold): void;
};

/**
 * The redemption turn holds the user's lock and the ones `locks` named, and cannot take more (but
 * the locks of new records' IDs, which `Turn.lockNew` draws in it), so its body's `hold` checks against exactly those. The runtime alone would only catch an actor
 * written without its lock; a lock held for exclusion (the group's, which keeps one member per
 * user) could go missing from `locks` without a sound.
 */
export function lockedUpFront<K extends HandledKind>(handler: HoldingHandler<K>): PurposeHandler<K> {
  const named = new WeakSet<LinkFacts<K>>();
  return {
    method: handler.method,
    check: handler.check,
    locks(link) {
      named.add(link);
      return handler.locks(link);
    },
    redeem(turn, link) {
      if (!named.has(link)) throw new TypeError('A link was redeemed without the locks its handler named');
      handler.redeem(turn, link, fixedHold(turn));
    },
  };
}

/**
 * What redeeming a group link does, in the same turn that signs the user in:
 * `invite` accepts the invite (invite `accepted`, member `active`); `join_group` makes the user an
 * active member of an `open` group (nothing when it already has a member record there).
 */
export function registerGroupLinkPurposes(purposes: LinkPurposes, core: GroupsCore): void {
  purposes.register('invite', lockedUpFront({
    method: 'invite_link',
    check(turn, { appId, purpose }) {
      const invite = turn.get<InviteContext>(INVITE_KIND, inviteKey(appId, purpose.groupId, purpose.inviteId));
      if (!invite) throw notFound('invite', purpose.inviteId);
      if (invite.state !== 'pending') throw invalidTransition(invite.state, 'invite.accept');
    },
    locks: ({ appId, purpose }) => [groupLock(appId, purpose.groupId), ...answerLocks(core, appId, purpose.groupId, purpose.inviteId)],
    redeem(turn, { appId, userId, purpose }, hold) {
      const edit = new GroupEdit(core, turn, hold, appId, purpose.groupId);
      answerInvite(core, edit, purpose.inviteId, userId, 'accept');
      core.links.forget(turn, edit.requireInvite(purpose.inviteId));
    },
  }));

  purposes.register('join_group', lockedUpFront({
    method: 'magic_link',
    check(turn, { appId, purpose }) {
      const group = turn.get<GroupContext>(GROUP_KIND, groupKey(appId, purpose.groupId));
      if (!group) throw validationError({ group_to_join: ['no such group'] });
      if (group.context.admission_policy !== 'open') throw validationError({ group_to_join: ['the group must be open'] });
    },
    locks: (link) => [groupLock(link.appId, link.purpose.groupId)],
    redeem(turn, link, hold) {
      // Deleting a group cannot find the links that name it; they answer 410 as an invite's link does.
      if (!turn.get(GROUP_KIND, groupKey(link.appId, link.purpose.groupId))) throw linkExpired('The group of this link no longer exists');
      const edit = new GroupEdit(core, turn, hold, link.appId, link.purpose.groupId);
      if (edit.group.context.admission_policy !== 'open') throw conflict('E_GROUP_NOT_OPEN', 'The group is no longer open');
      if (edit.memberOfUser(link.userId)) return;
      const memberId = turn.lockNew(() => newId('member'), (id) => [memberLock(link.appId, link.purpose.groupId, id)]);
      edit.addMember(memberId, { userId: link.userId, roles: [], state: 'active', addedBy: `user:${link.userId}` }, 'group_to_join');
      edit.finish();
    },
  }));
}
