import { noContent, ok } from '../../http/reply.js';
import type { Route } from '../../http/route.js';
import type { RequestContext } from '../../http/context.js';
import { parseJsonBody } from '../../lib/validate.js';
import { callerUser } from '../../auth/bearer-auth.js';
import { actingOf } from './acting.js';
import { behind, listOf, type GroupsFeature } from './feature.js';
import { renderGroup, withProfile } from './render.js';
import { GroupBody, GroupUpdateBody, listQueryParser } from './schemas.js';

export const ME_GROUPS = '/me/groups';
export const APP_GROUPS = '/applications/:app/groups';

/** The group resource itself, on `/me/groups…` (members see, owners change) and for the platform. */
export function groupResourceRoutes(feature: GroupsFeature): Route[] {
  const { deps, reads, groups, showWrapper } = feature;
  const parseMyGroupsQuery = listQueryParser('group', []);
  const parseGroupsQuery = listQueryParser('group', ['lookup_filter'], { lookupByName: true });

  const remove = async (ctx: RequestContext) => {
    await groups.remove(actingOf(ctx), ctx.params.group);
    return noContent();
  };

  return [
    ...behind(deps.requireUser, [
      {
        method: 'POST',
        path: ME_GROUPS,
        async handle(ctx) {
          const { group, member } = await groups.create(actingOf(ctx), parseJsonBody(ctx, GroupBody));
          return ok(showWrapper({ group, member: member! }));
        },
      },
      {
        method: 'GET',
        path: ME_GROUPS,
        query: 'parsed',
        handle(ctx) {
          const { appId, userId } = callerUser(ctx);
          const page = reads.groupsOfUser(appId, userId, parseMyGroupsQuery(ctx));
          const profile = deps.profiles.memberProfile(appId, userId, 'user');
          return ok(listOf(page, ({ group, member }) => ({ group, member: withProfile(member, profile) })));
        },
      },
      {
        method: 'GET',
        path: `${ME_GROUPS}/:group`,
        handle(ctx) {
          const { appId, userId } = callerUser(ctx);
          return ok(showWrapper(reads.visibleGroup(appId, ctx.params.group, userId)));
        },
      },
      {
        method: 'PUT',
        path: `${ME_GROUPS}/:group`,
        async handle(ctx) {
          const { group, member } = await groups.update(actingOf(ctx), ctx.params.group, parseJsonBody(ctx, GroupUpdateBody));
          return ok(showWrapper({ group, member: member! }));
        },
      },
      { method: 'DELETE', path: `${ME_GROUPS}/:group`, handle: remove },
    ]),
    ...behind(deps.requireApp, [
      {
        method: 'POST',
        path: APP_GROUPS,
        async handle(ctx) {
          const { group } = await groups.create(actingOf(ctx), parseJsonBody(ctx, GroupBody));
          return ok(renderGroup(group));
        },
      },
      {
        method: 'GET',
        path: APP_GROUPS,
        query: 'parsed',
        handle(ctx) {
          return ok(listOf(reads.groups(ctx.params.app, parseGroupsQuery(ctx)), renderGroup));
        },
      },
      {
        method: 'GET',
        path: `${APP_GROUPS}/:group`,
        handle(ctx) {
          return ok(renderGroup(reads.group(ctx.params.app, ctx.params.group)));
        },
      },
      {
        method: 'PUT',
        path: `${APP_GROUPS}/:group`,
        async handle(ctx) {
          const { group } = await groups.update(actingOf(ctx), ctx.params.group, parseJsonBody(ctx, GroupUpdateBody));
          return ok(renderGroup(group));
        },
      },
      { method: 'DELETE', path: `${APP_GROUPS}/:group`, handle: remove },
    ]),
  ];
}
