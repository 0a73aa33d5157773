import { forbidden } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { jsonEqual } from '../../lib/json-equal.js';
import type { UserRef } from '../users/directory.js';
import type { MemberState } from '../../../machines/member.machine.js';
import { partyOf, type Acting } from './acting.js';
import { runEdit, type GroupsCore } from './core.js';
import { memberLock, withOwner } from './keys.js';
import type { MemberView } from './render.js';
import { userTarget } from './user-target.js';

export interface NewMemberRequest {
  ref: UserRef;
  roles: string[];
  state: MemberState;
}

/**
 * An owner on `/me` adds members `active` only: `invite_pending` is an invitation's (one made without an
 * invite could never be accepted) and `invite_rejected` the invited user's own answer (ADDENDUM §5).
 */
const OWNER_ADDS_ACTIVE =
  'On /me a member is added active: a user is invite_pending only through an invite (POST /me/groups/{group}/invites) and invite_rejected only by rejecting one itself';

/** Adding members, changing their roles and removing them; on `/me` only owners may. */
export class MemberService {
  constructor(private readonly core: GroupsCore) {}

  /** 409 `E_MEMBER_EXISTS` for a user already in the group; the first member gets `owner`. On `/me`, `active` only (403). */
  async add(acting: Acting, groupId: string, request: NewMemberRequest): Promise<MemberView> {
    const { appId } = acting;
    const target = userTarget(this.core.users, appId, request.ref);
    return runEdit(this.core, acting, groupId, target.locks, (edit, turn) => {
      if (acting.kind === 'user') {
        edit.requireOwner(acting.userId);
        if (request.state !== 'active') throw forbidden(OWNER_ADDS_ACTIVE);
      }
      const memberId = turn.lockNew(() => newId('member'), (id) => [memberLock(appId, groupId, id)]);
      const member = edit.addMember(memberId, {
        userId: target.resolve(turn, edit.hold),
        roles: request.roles,
        state: request.state,
        addedBy: partyOf(acting),
      }, target.field);
      edit.finish();
      return member;
    });
  }

  /**
   * Replaces a member's roles; 409 `E_LAST_OWNER` if that takes `owner` from the last active owner.
   * A member still waiting on its invite passes the roles to the invite, which grants them on acceptance.
   * The roles it holds already change nothing.
   */
  async setRoles(acting: Acting, groupId: string, memberId: string, roles: string[]): Promise<MemberView> {
    const { appId } = acting;
    return runEdit(this.core, acting, groupId, [memberLock(appId, groupId, memberId)], (edit, turn) => {
      if (acting.kind === 'user') edit.requireOwner(acting.userId);
      const current = edit.requireMember(memberId);
      const inviteId = current.context.invite_id;
      const invite = inviteId === undefined ? undefined : edit.invite(inviteId);
      const pending = invite?.state === 'pending' ? invite : undefined;
      // The first invite of a group keeps `owner`, whichever of its two records is changed.
      const granted = pending?.context.first ? withOwner(roles) : roles;
      // The same roles are nothing to write (updated_at keeps meaning "last changed"); a rejected member still refuses.
      const same = jsonEqual(granted, current.context.roles) && (!pending || jsonEqual(granted, pending.context.roles));
      if (same && current.state !== 'invite_rejected') return current;
      const member = edit.sendMember(memberId, { type: 'member.setRoles', roles: granted, at: turn.now });
      if (pending) {
        const { redirect_url, app_variant_id } = pending.context;
        edit.sendInvite(pending.context.id, { type: 'invite.update', roles: granted, redirect_url, app_variant_id });
      }
      edit.finish();
      return member;
    });
  }

  /** Owners remove anyone; any member may remove itself (leave). Never the last active owner. */
  async remove(acting: Acting, groupId: string, memberId: string): Promise<void> {
    const { appId } = acting;
    await runEdit(this.core, acting, groupId, [memberLock(appId, groupId, memberId)], (edit) => {
      if (acting.kind === 'user' && edit.requireVisibleTo(acting.userId).context.id !== memberId) {
        edit.requireOwner(acting.userId);
      }
      edit.removeMember(memberId);
      edit.finish();
    });
  }
}
