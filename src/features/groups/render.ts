import type { ActorView } from '../../runtime/runtime.js';
import type { GroupContext } from '../../../machines/group.machine.js';
import type { MemberContext } from '../../../machines/member.machine.js';
import type { InviteContext } from '../../../machines/invite.machine.js';
import type { MemberProfile } from '../users/profile-views.js';
import type { AddressKind } from '../users/addresses.js';

export type GroupView = ActorView<GroupContext>;
export type MemberView = ActorView<MemberContext>;
export type InviteView = ActorView<InviteContext>;

/** The Group resource of SPEC.md. */
export function renderGroup({ context: c }: GroupView) {
  return {
    id: c.id,
    name: c.name,
    member_count: c.tally.active,
    app_id: c.appId,
    admission_policy: c.admission_policy,
    meta: c.meta,
    created_at: c.created_at,
    updated_at: c.updated_at,
    created_by: c.created_by,
    updated_by: c.updated_by,
  };
}

/**
 * `member` with its user's `profile` (`ProfileViews.memberProfile`) added last, when it is given: set on
 * the member it is handed, a rendering made for this answer, rather than spread into a copy (a page of
 * members renders a hundred of them: docs/PERFORMANCE.md, round 23).
 */
export function withProfile<M extends object>(member: M, profile: MemberProfile | undefined): M & { profile?: MemberProfile } {
  if (profile) (member as M & { profile?: MemberProfile }).profile = profile;
  return member;
}

/** The Group member resource; `profile` is left out where the member sits inside its own user's profile. */
export function renderMember({ state, context: c }: MemberView, profile?: MemberProfile) {
  return withProfile(
    {
      id: c.id,
      user_id: c.user_id,
      group_id: c.group_id,
      roles: c.roles,
      state,
      invited_by: c.invited_by,
      added_by: c.added_by,
      created_at: c.created_at,
      updated_at: c.updated_at,
    },
    profile,
  );
}

/**
 * The Group invite resource; its address (`email` or `phone`, and `user_lookup_value`, which repeats
 * it) only where `showsAddress` allows its kind.
 */
export function renderInvite({ state, context: c }: InviteView, showsAddress: (kind: AddressKind) => boolean) {
  const kind: AddressKind | undefined = c.email !== undefined ? 'email' : c.phone !== undefined ? 'phone' : undefined;
  const shown = kind === undefined || showsAddress(kind);
  return {
    id: c.id,
    group_id: c.group_id,
    roles: c.roles,
    state,
    email: shown ? c.email : undefined,
    phone: shown ? c.phone : undefined,
    user_id: c.user_id,
    user_lookup_value: shown ? c.user_lookup_value : undefined,
    redirect_url: c.redirect_url,
    app_variant_id: c.app_variant_id,
    created_at: c.created_at,
    created_by: c.created_by,
    accepted_by: c.accepted_by,
    ensured_user_id: c.ensured_user_id,
  };
}
