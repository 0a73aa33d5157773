import { notFound } from '../../lib/errors.js';
import { noContent, ok } from '../../http/reply.js';
import type { Route } from '../../http/route.js';
import type { RequestContext } from '../../http/context.js';
import { expectNoFields, parseJsonBody } from '../../lib/validate.js';
import { callerUser } from '../../auth/bearer-auth.js';
import { actingOf, userActingOf, type Acting } from './acting.js';
import type { UserRef } from '../users/directory.js';
import { behind, listOf, type GroupsFeature } from './feature.js';
import { APP_GROUPS, ME_GROUPS } from './group-routes.js';
import { isActiveOwner, seesInvite } from './keys.js';
import { InviteBody, InviteUpdateBody, optionalUserRefOf, userRefOf, listQueryParser, type UserFields } from './schemas.js';

/** Invites under `/me/groups/{group}` (owners manage, the invited user answers) and the platform's. */
export function inviteRoutes(feature: GroupsFeature): Route[] {
  const { deps, reads, invites, showInvite, showWrapper, requireNamable } = feature;
  const parseInvitesQuery = listQueryParser('invite', ['ensured_user_id']);

  const requestOf = <Ref extends UserRef | undefined>(
    ctx: RequestContext,
    acting: Acting,
    body: typeof InviteBody | typeof InviteUpdateBody,
    refOf: (fields: UserFields) => Ref,
  ) => {
    const { user_id, email, phone, ...rest } = parseJsonBody(ctx, body);
    const ref = refOf({ user_id, email, phone });
    requireNamable(acting, ref);
    return { ...rest, ref };
  };
  const create = async (ctx: RequestContext) => {
    const acting = actingOf(ctx);
    const { invite, link } = await invites.create(acting, ctx.params.group, requestOf(ctx, acting, InviteBody, userRefOf));
    return ok({ link, invitation: showInvite(invite, acting.kind) });
  };
  const update = async (ctx: RequestContext) => {
    const acting = actingOf(ctx);
    return ok(showInvite(await invites.update(acting, ctx.params.group, ctx.params.invite, requestOf(ctx, acting, InviteUpdateBody, optionalUserRefOf)), acting.kind));
  };
  const remove = async (ctx: RequestContext) => {
    await invites.remove(actingOf(ctx), ctx.params.group, ctx.params.invite);
    return noContent();
  };
  const answer = (kind: 'accept' | 'reject') => async (ctx: RequestContext) => {
    expectNoFields(ctx);
    return ok(showWrapper(await invites.answer(userActingOf(ctx), ctx.params.group, ctx.params.invite, kind)));
  };

  return [
    ...behind(deps.requireUser, [
      {
        method: 'GET',
        path: `${ME_GROUPS}/:group/invites`,
        query: 'parsed',
        handle(ctx) {
          const { appId, userId } = callerUser(ctx);
          const { member } = reads.visibleGroup(appId, ctx.params.group, userId);
          const query = parseInvitesQuery(ctx);
          // Owners see every invite; anyone else only the invites made for them.
          const scoped = isActiveOwner(member) ? query : { ...query, ensured_user_id: userId };
          return ok(listOf(reads.invites(appId, ctx.params.group, scoped), (invite) => showInvite(invite, 'user')));
        },
      },
      {
        method: 'GET',
        path: `${ME_GROUPS}/:group/invites/:invite`,
        handle(ctx) {
          const { appId, userId } = callerUser(ctx);
          const { member } = reads.visibleGroup(appId, ctx.params.group, userId);
          const invite = reads.invite(appId, ctx.params.group, ctx.params.invite);
          if (!seesInvite(member, invite, userId)) throw notFound('invite', ctx.params.invite);
          return ok(showInvite(invite, 'user'));
        },
      },
      { method: 'POST', path: `${ME_GROUPS}/:group/invites`, handle: create },
      { method: 'PUT', path: `${ME_GROUPS}/:group/invites/:invite`, handle: update },
      { method: 'DELETE', path: `${ME_GROUPS}/:group/invites/:invite`, handle: remove },
      { method: 'POST', path: `${ME_GROUPS}/:group/invites/:invite/accept`, handle: answer('accept') },
      { method: 'POST', path: `${ME_GROUPS}/:group/invites/:invite/reject`, handle: answer('reject') },
    ]),
    ...behind(deps.requireApp, [
      {
        method: 'GET',
        path: `${APP_GROUPS}/:group/invites`,
        query: 'parsed',
        handle(ctx) {
          const query = parseInvitesQuery(ctx);
          return ok(listOf(reads.invites(ctx.params.app, ctx.params.group, query), (invite) => showInvite(invite, 'app')));
        },
      },
      {
        method: 'GET',
        path: `${APP_GROUPS}/:group/invites/:invite`,
        handle(ctx) {
          return ok(showInvite(reads.invite(ctx.params.app, ctx.params.group, ctx.params.invite), 'app'));
        },
      },
      { method: 'POST', path: `${APP_GROUPS}/:group/invites`, handle: create },
      { method: 'PUT', path: `${APP_GROUPS}/:group/invites/:invite`, handle: update },
      { method: 'DELETE', path: `${APP_GROUPS}/:group/invites/:invite`, handle: remove },
    ]),
  ];
}
