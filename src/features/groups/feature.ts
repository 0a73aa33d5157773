import type { Deps } from '../../deps.js';
import type { Route, Step } from '../../http/route.js';
import type { GroupsCore } from './core.js';
import { GroupService } from './group-service.js';
import { InviteService } from './invite-service.js';
import { MemberService } from './member-service.js';
import { GroupReads } from './reads.js';
import { renderGroup, renderMember, type GroupView, type MemberView } from './render.js';

/** The groups feature's services, built once and shared by its routes. */
export interface GroupsFeature {
  deps: Deps;
  core: GroupsCore;
  reads: GroupReads;
  groups: GroupService;
  members: MemberService;
  invites: InviteService;
  /** A member as every endpoint answers it, with its user's `profile`. */
  showMember(member: MemberView): ReturnType<typeof renderMember>;
  /** The Group-with-member wrapper. */
  showWrapper(pair: { group: GroupView; member: MemberView }): { group: ReturnType<typeof renderGroup>; member: ReturnType<typeof renderMember> };
}

export function createGroupsFeature(deps: Deps): GroupsFeature {
  const core = deps.groups;
  const showMember = (member: MemberView) => renderMember(member, deps.users.get(member.context.appId, member.context.user_id));
  return {
    deps,
    core,
    reads: new GroupReads(core),
    groups: new GroupService(core),
    members: new MemberService(core),
    invites: new InviteService(core),
    showMember,
    showWrapper: ({ group, member }) => ({ group: renderGroup(group), member: showMember(member) }),
  };
}

/** The paged list envelope. */
export const listOf = <T, R>(page: { total: number; items: T[] }, render: (item: T) => R) => ({
  total_results: page.total,
  results: page.items.map(render),
});

/** Routes that all run behind one authentication step. */
export const behind = (step: Step, routes: Omit<Route, 'before'>[]): Route[] => routes.map((route) => ({ ...route, before: [step] }));
