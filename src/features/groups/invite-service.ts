import { conflict, forbidden, notFound, validationError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { jsonEqual } from '../../lib/json-equal.js';
import { USER_KIND, userKey, userLock, type UserRef } from '../users/directory.js';
import { normalizeAddress } from '../users/addresses.js';
import { ATTRIBUTE_KEYS_LIMIT, ATTRIBUTE_VALUES_LIMIT, fitsProfileLimit } from '../users/profile-change.js';
import type { InviteContext, InviteEvent } from '../../../machines/invite.machine.js';
import type { UserContext } from '../../../machines/user.machine.js';
import { authorOf, partyOf, type Acting, type UserActing } from './acting.js';
import { runEdit, type GroupsCore } from './core.js';
import type { GroupEdit } from './edit.js';
import { INVITE_KIND, inviteKey, inviteLock, memberLock, seesInvite, withOwner } from './keys.js';
import type { GroupView, InviteView, MemberView } from './render.js';
import { refField, userTarget } from './user-target.js';

export interface InviteRequest {
  ref: UserRef;
  roles: string[];
  redirect_url?: string;
  app_variant_id?: string;
}

/** An invite PUT may leave the user unnamed: the invite keeps its own. */
export type InviteUpdate = Omit<InviteRequest, 'ref'> & { ref?: UserRef };

/**
 * Moves an invite and its member together: `pending → accepted` with `invite_pending → active`, or
 * `pending → rejected` with `invite_pending → invite_rejected`; an accepted invite's app variant joins
 * the user's. Only the invited user may (403 for an owner, 404 for a member who may not see the
 * invite, as for a missing one); the turn must hold the locks of `answerLocks`. Callable from
 * any turn over the group (a link's redemption).
 */
export function answerInvite(
  core: GroupsCore,
  edit: GroupEdit,
  inviteId: string,
  userId: string,
  answer: 'accept' | 'reject',
): { group: GroupView; member: MemberView } {
  const caller = edit.requireVisibleTo(userId);
  const invite = edit.requireInvite(inviteId);
  if (!seesInvite(caller, invite, userId)) throw notFound('invite', inviteId);
  if (invite.context.ensured_user_id !== userId) throw forbidden('Only the invited user may answer an invite');
  const variant = answer === 'accept' && madeByApp(edit, invite) ? invite.context.app_variant_id : undefined;
  // Before anything changes: the variant is written to the user.
  if (variant !== undefined) edit.hold([userLock(edit.appId, userId)]);
  const at = edit.turn.now;
  const event: InviteEvent = answer === 'accept' ? { type: 'invite.accept', by: userId, at } : { type: 'invite.reject', at };
  edit.sendInvite(inviteId, event);
  const member = edit.sendMember(invite.context.member_id, { type: answer === 'accept' ? 'member.accept' : 'member.reject', at });
  if (variant !== undefined) joinVariant(core, edit, userId, variant);
  return { group: edit.finish(), member };
}

/**
 * SPEC: on acceptance the user is "signed into" the invite's app variant: the variant joins the
 * user's `<brand>:app_variants` attribute, unless that would pass the attribute or profile size limits.
 */
function joinVariant(core: GroupsCore, edit: GroupEdit, userId: string, variant: string): void {
  const { appId, turn } = edit;
  // The turn's own view: a link's redemption signed the user in (or made it) earlier in this turn.
  const user = turn.get<UserContext>(USER_KIND, userKey(appId, userId));
  if (!user) return;
  const { data, attributes } = user.context;
  const key = core.appVariantsKey;
  const variants = attributes[key] ?? [];
  if (variants.includes(variant)) return;
  const next = { ...attributes, [key]: [...variants, variant] };
  const full = variants.length >= ATTRIBUTE_VALUES_LIMIT || Object.keys(next).length > ATTRIBUTE_KEYS_LIMIT || !fitsProfileLimit(data, next);
  if (full) return;
  core.users.update(turn, appId, userId, { data, attributes: next }, user);
}

/**
 * Whether the application made the invite: only then does its app variant join the user's
 * `<brand>:app_variants`, which no user may write (ADDENDUM §3); an owner on `/me` could otherwise
 * grant any variant to an account of its own that it invites.
 */
const madeByApp = (edit: GroupEdit, invite: InviteView) =>
  edit.member(invite.context.member_id)?.context.invited_by === `app:${edit.appId}`;

/** On `/me`, an invite the application made keeps its app variant: sent back as it is, or left out. */
function keptAppVariant(invite: InviteView, named: string | undefined): string | undefined {
  const kept = invite.context.app_variant_id;
  if (named !== undefined && named !== kept) {
    throw validationError({ app_variant_id: ['only the application may name the app variant of an invite it made'] });
  }
  return kept;
}

/**
 * An update that would store what the invite (and its waiting member) hold already: nothing to write, so
 * the member's updated_at keeps meaning "last changed".
 */
function isUnchanged(invite: InviteView, roles: string[], redirectUrl?: string, appVariant?: string, waiting?: MemberView): boolean {
  const { context } = invite;
  return (
    jsonEqual(roles, context.roles) &&
    redirectUrl === context.redirect_url &&
    appVariant === context.app_variant_id &&
    (!waiting || jsonEqual(roles, waiting.context.roles))
  );
}

/** The locks a turn answering an invite holds besides the group's: the invite's and its member's. */
export function answerLocks(core: GroupsCore, appId: string, groupId: string, inviteId: string): string[] {
  const invite = core.runtime.read<InviteContext>(INVITE_KIND, inviteKey(appId, groupId, inviteId));
  const locks = [inviteLock(appId, groupId, inviteId)];
  return invite ? [...locks, memberLock(appId, groupId, invite.context.member_id)] : locks;
}

/** Invitations: each one ensures its user and makes that user's `invite_pending` member. */
export class InviteService {
  constructor(private readonly core: GroupsCore) {}

  /**
   * 409 `E_INVITE_EXISTS` while the user has a pending invite to the group, `E_MEMBER_EXISTS` if it
   * is an active member; a member record of another state is replaced by the invite's new one.
   */
  async create(acting: Acting, groupId: string, request: InviteRequest): Promise<{ invite: InviteView; link: string | null }> {
    const { appId } = acting;
    const target = userTarget(this.core.users, appId, request.ref);
    return runEdit(this.core, acting, groupId, target.locks, (edit, turn) => {
      if (acting.kind === 'user') edit.requireOwner(acting.userId);
      const { inviteId, memberId } = turn.lockNew(
        () => ({ inviteId: newId('invite'), memberId: newId('member') }),
        (ids) => [inviteLock(appId, groupId, ids.inviteId), memberLock(appId, groupId, ids.memberId)],
      );
      const userId = target.resolve(turn, edit.hold);
      if (this.pendingInviteOf(edit, userId)) {
        throw conflict('E_INVITE_EXISTS', `User ${userId} already has a pending invite to this group`);
      }
      const existing = edit.memberOfUser(userId);
      if (existing?.state === 'active') throw conflict('E_MEMBER_EXISTS', `User ${userId} is already a member of this group`);
      if (existing) edit.removeMember(existing.context.id);
      const first = edit.isEmpty;
      const roles = first ? withOwner(request.roles) : request.roles;
      edit.addMember(memberId, { userId, roles, state: 'invite_pending', invitedBy: partyOf(acting), inviteId }, target.field);
      const invite = edit.addInvite(inviteId, {
        roles,
        first,
        target: request.ref,
        redirectUrl: request.redirect_url,
        appVariantId: request.app_variant_id,
        ensuredUserId: userId,
        memberId,
        by: authorOf(acting),
      });
      // The link signs the invited user in: only the application, which may sign any of its users in,
      // is handed one. An owner on `/me` holding it could take over the invited account.
      const link = acting.kind === 'app' ? this.core.links.issue(turn, invite, request.ref) : null;
      edit.finish();
      return { invite, link };
    });
  }

  /**
   * Only while pending: replaces roles (carried to the pending member), `redirect_url` and
   * `app_variant_id`. The invite keeps its user: the body may name it again, naming another one is refused.
   * A body that leaves all of them as stored writes nothing.
   */
  async update(acting: Acting, groupId: string, inviteId: string, request: InviteUpdate): Promise<InviteView> {
    const { appId } = acting;
    return runEdit(this.core, acting, groupId, answerLocks(this.core, appId, groupId, inviteId), (edit, turn) => {
      if (acting.kind === 'user') edit.requireOwner(acting.userId);
      const current = edit.requireInvite(inviteId);
      if (request.ref) this.requireSameUser(appId, current, request.ref);
      const byApp = madeByApp(edit, current);
      // It came with a link, and so with the check of the link's place (`create`).
      if (byApp && request.redirect_url !== undefined) this.core.links.requireRedirect(appId, request.redirect_url);
      const roles = current.context.first ? withOwner(request.roles) : request.roles;
      const appVariant = acting.kind === 'user' && byApp ? keptAppVariant(current, request.app_variant_id) : request.app_variant_id;
      const member = edit.member(current.context.member_id);
      const waiting = member?.state === 'invite_pending' ? member : undefined;
      if (current.state === 'pending' && isUnchanged(current, roles, request.redirect_url, appVariant, waiting)) return current;
      const invite = edit.sendInvite(inviteId, {
        type: 'invite.update',
        roles,
        redirect_url: request.redirect_url,
        app_variant_id: appVariant,
      });
      if (waiting) edit.sendMember(waiting.context.id, { type: 'member.setRoles', roles, at: turn.now });
      if (request.redirect_url !== current.context.redirect_url) this.core.links.retarget(turn, invite);
      edit.finish();
      return invite;
    });
  }

  /** Deletes an invite; a pending one takes its pending member with it. */
  async remove(acting: Acting, groupId: string, inviteId: string): Promise<void> {
    const { appId } = acting;
    await runEdit(this.core, acting, groupId, answerLocks(this.core, appId, groupId, inviteId), (edit) => {
      if (acting.kind === 'user') edit.requireOwner(acting.userId);
      edit.removeInvite(inviteId);
      edit.finish();
    });
  }

  /** `…/accept` and `…/reject` on `/me`: the invited user answers; the invite's link dies. */
  async answer(acting: UserActing, groupId: string, inviteId: string, answer: 'accept' | 'reject') {
    const { appId, userId } = acting;
    return runEdit(this.core, acting, groupId, answerLocks(this.core, appId, groupId, inviteId), (edit, turn) => {
      const answered = answerInvite(this.core, edit, inviteId, userId, answer);
      this.core.links.kill(turn, edit.requireInvite(inviteId));
      return answered;
    });
  }

  private pendingInviteOf(edit: GroupEdit, userId: string): InviteView | undefined {
    for (const id of this.core.invites.idsOf(edit.appId, edit.groupId, userId)) {
      const invite = edit.invite(id);
      if (invite?.state === 'pending') return invite;
    }
    return undefined;
  }

  private requireSameUser(appId: string, invite: InviteView, ref: UserRef): void {
    if (!this.namesInvitedUser(appId, invite, ref)) {
      throw validationError({ [refField(ref)]: ['an invite keeps its user; delete it and invite the other user instead'] });
    }
  }

  /**
   * Whether `ref` names the invite's user: by ID, by an address it holds, or by the address the invite
   * was made for, which the invite shows though its user may have changed it since (a read sent back).
   */
  private namesInvitedUser(appId: string, invite: InviteView, ref: UserRef): boolean {
    const userId = invite.context.ensured_user_id;
    if ('user_id' in ref) return ref.user_id === userId;
    const [kind, value] = 'email' in ref ? (['email', ref.email] as const) : (['phone', ref.phone] as const);
    const madeFor = invite.context[kind];
    if (madeFor !== undefined && normalizeAddress(kind, madeFor) === normalizeAddress(kind, value)) return true;
    return this.core.users.findByAddress(appId, kind, value).includes(userId);
  }
}
