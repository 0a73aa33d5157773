import { noContent, ok } from '../../http/reply.js';
import type { Route } from '../../http/route.js';
import type { RequestContext } from '../../http/context.js';
import { parseJsonBody } from '../../lib/validate.js';
import { callerUser } from '../../auth/bearer-auth.js';
import { actingOf } from './acting.js';
import { behind, listOf, type GroupsFeature } from './feature.js';
import { APP_GROUPS, ME_GROUPS } from './group-routes.js';
import { MemberCreateBody, MemberUpdateBody, userRefOf, listQueryParser } from './schemas.js';
import type { AddressKind } from '../users/addresses.js';
import { userReadsAddress } from '../users/profile-views.js';

/** Members under `/me/groups/{group}` (owners manage, active members read) and the platform's. */
export function memberRoutes(feature: GroupsFeature): Route[] {
  const { deps, reads, members, showMember, requireNamable } = feature;
  const parseMembersQuery = listQueryParser('member', ['lookup_filter']);

  const add = async (ctx: RequestContext) => {
    const body = parseJsonBody(ctx, MemberCreateBody);
    const request = { ref: userRefOf(body), roles: body.roles, state: body.state };
    const acting = actingOf(ctx);
    requireNamable(acting, request.ref);
    return ok(showMember(await members.add(acting, ctx.params.group, request), acting.kind));
  };
  const setRoles = async (ctx: RequestContext) => {
    const { roles } = parseJsonBody(ctx, MemberUpdateBody);
    const acting = actingOf(ctx);
    return ok(showMember(await members.setRoles(acting, ctx.params.group, ctx.params.member, roles), acting.kind));
  };
  const remove = async (ctx: RequestContext) => {
    await members.remove(actingOf(ctx), ctx.params.group, ctx.params.member);
    return noContent();
  };

  return [
    ...behind(deps.requireUser, [
      {
        method: 'GET',
        path: `${ME_GROUPS}/:group/members`,
        query: 'parsed',
        handle(ctx) {
          const { appId, userId } = callerUser(ctx);
          reads.requireActiveMember(appId, ctx.params.group, userId);
          const query = parseMembersQuery(ctx);
          const { schema } = deps.apps.require(appId);
          const searchable = (kind: AddressKind) => userReadsAddress(schema, kind);
          return ok(listOf(reads.members(appId, ctx.params.group, query, searchable), (member) => showMember(member, 'user')));
        },
      },
      {
        method: 'GET',
        path: `${ME_GROUPS}/:group/members/:member`,
        handle(ctx) {
          const { appId, userId } = callerUser(ctx);
          const own = reads.visibleGroup(appId, ctx.params.group, userId).member;
          if (own.context.id === ctx.params.member) return ok(showMember(own, 'user'));
          reads.requireActiveMember(appId, ctx.params.group, userId);
          return ok(showMember(reads.member(appId, ctx.params.group, ctx.params.member), 'user'));
        },
      },
      { method: 'POST', path: `${ME_GROUPS}/:group/members`, handle: add },
      { method: 'PUT', path: `${ME_GROUPS}/:group/members/:member`, handle: setRoles },
      { method: 'DELETE', path: `${ME_GROUPS}/:group/members/:member`, handle: remove },
    ]),
    ...behind(deps.requireApp, [
      {
        method: 'GET',
        path: `${APP_GROUPS}/:group/members`,
        query: 'parsed',
        handle(ctx) {
          const query = parseMembersQuery(ctx);
          return ok(listOf(reads.members(ctx.params.app, ctx.params.group, query, () => true), (member) => showMember(member, 'app')));
        },
      },
      {
        method: 'GET',
        path: `${APP_GROUPS}/:group/members/:member`,
        handle(ctx) {
          return ok(showMember(reads.member(ctx.params.app, ctx.params.group, ctx.params.member), 'app'));
        },
      },
      { method: 'POST', path: `${APP_GROUPS}/:group/members`, handle: add },
      { method: 'PUT', path: `${APP_GROUPS}/:group/members/:member`, handle: setRoles },
      { method: 'DELETE', path: `${APP_GROUPS}/:group/members/:member`, handle: remove },
    ]),
  ];
}
