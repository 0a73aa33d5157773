import type { ActorView } from '../../runtime/runtime.js';
import type { GroupContext } from '../../../machines/group.machine.js';
import type { MemberContext } from '../../../machines/member.machine.js';
import type { InviteContext } from '../../../machines/invite.machine.js';
import type { MemberProfile } from '../users/profile-views.js';

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

/** A rendered member with its user's `profile` (`ProfileViews.memberProfile`) added last, when it is given. */
export function withProfile<M extends object>(member: M, profile: MemberProfile | undefined) {
  return profile ? { ...member, profile } : member;
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

/** The Group invite resource. */
export function renderInvite({ state, context: c }: InviteView) {
  return {
    id: c.id,
    group_id: c.group_id,
    roles: c.roles,
    state,
    email: c.email,
    phone: c.phone,
    user_id: c.user_id,
    user_lookup_value: c.user_lookup_value,
    redirect_url: c.redirect_url,
    app_variant_id: c.app_variant_id,
    created_at: c.created_at,
    created_by: c.created_by,
    accepted_by: c.accepted_by,
    ensured_user_id: c.ensured_user_id,
  };
}
