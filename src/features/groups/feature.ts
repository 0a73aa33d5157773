import type { Deps } from '../../deps.js';
import type { Route, Step } from '../../http/route.js';
import { notFound, validationError } from '../../lib/errors.js';
import { GroupService } from './group-service.js';
import { InviteService } from './invite-service.js';
import { MemberService } from './member-service.js';
import { GroupReads } from './reads.js';
import { renderGroup, renderInvite, renderMember, type GroupView, type InviteView, type MemberView } from './render.js';
import { userReadsAddress, type ProfileReader } from '../users/profile-views.js';
import type { UserRef } from '../users/directory.js';
import type { Acting } from './acting.js';

/** The groups feature's services, built once and shared by its routes. */
export interface GroupsFeature {
  deps: Deps;
  reads: GroupReads;
  groups: GroupService;
  members: MemberService;
  invites: InviteService;
  /** A member as every endpoint answers it, with its user's `profile` as `reader` may see it. */
  showMember(member: MemberView, reader: ProfileReader): ReturnType<typeof renderMember>;
  /** An invite as `reader` may see it: on `/me`, its address only where a user may read that field. */
  showInvite(invite: InviteView, reader: ProfileReader): ReturnType<typeof renderInvite>;
  /**
   * 400 when a user on `/me` names a member's or invite's user by an address the app keeps from its
   * users: the answer (the user's ID, or `E_MEMBER_EXISTS` naming it) would tell who holds it.
   */
  requireNamable(acting: Acting, ref: UserRef | undefined): void;
  /** The Group-with-member wrapper, which only `/me` answers. */
  showWrapper(pair: { group: GroupView; member: MemberView }): { group: ReturnType<typeof renderGroup>; member: ReturnType<typeof renderMember> };
}

export function createGroupsFeature(deps: Deps): GroupsFeature {
  const core = deps.groups;
  const showMember = (member: MemberView, reader: ProfileReader) =>
    renderMember(member, deps.profiles.memberProfile(member.context.appId, member.context.user_id, reader));
  return {
    deps,
    reads: new GroupReads(core),
    groups: new GroupService(core),
    members: new MemberService(core),
    invites: new InviteService(core),
    showMember,
    showInvite(invite, reader) {
      const schema = reader === 'user' ? deps.apps.require(invite.context.appId).schema : undefined;
      return renderInvite(invite, (kind) => schema === undefined || userReadsAddress(schema, kind));
    },
    requireNamable(acting, ref) {
      if (acting.kind !== 'user' || ref === undefined || 'user_id' in ref) return;
      const kind = 'email' in ref ? 'email' : 'phone';
      if (!userReadsAddress(deps.apps.require(acting.appId).schema, kind)) {
        throw validationError({ [kind]: ['users of this app may not read this field: name the user by user_id'] });
      }
    },
    showWrapper: ({ group, member }) => ({ group: renderGroup(group), member: showMember(member, 'user') }),
  };
}

/** The paged list envelope. */
export const listOf = <T, R>(page: { total: number; items: T[] }, render: (item: T) => R) => ({
  total_results: page.total,
  results: page.items.map(render),
});

const ID_SHAPES = [
  ['group', /^group_[0-9A-Z]{26}$/],
  ['member', /^member_[0-9A-Z]{26}$/],
  ['invite', /^invite_[0-9A-Z]{26}$/],
] as const;

/** A path ID of a shape we never issue names nothing; it is answered 404 before it reaches LMDB's bounded keys. */
const idsOfKnownShape: Step = (ctx) => {
  for (const [param, shape] of ID_SHAPES) {
    if (ctx.params[param] !== undefined && !shape.test(ctx.params[param])) throw notFound(param);
  }
};

/** Routes that all run behind one authentication step, then the path ID check. */
export const behind = (step: Step, routes: Omit<Route, 'before'>[]): Route[] =>
  routes.map((route) => ({ ...route, before: [step, idsOfKnownShape] }));
