import { jsonBytes, noContent, ok } from '../../http/reply.js';
import type { Route } from '../../http/route.js';
import type { RequestContext } from '../../http/context.js';
import { pageQueryParser } from '../../http/page-query.js';
import { callerAppId } from '../../auth/platform-auth.js';
import { NO_FIELDS, parseJsonBody } from '../../lib/validate.js';
import type { Deps } from '../../deps.js';
import { CLIENT_ID_PATTERN, ClientBodySchema, ClientUpdateSchema, CredentialBodySchema } from './schemas.js';
import { OidcClientService } from './service.js';

/** SPEC "OIDC clients" and ADDENDUM §6: platform routes, each app confined to its own clients. */
export function oidcClientRoutes(deps: Deps): Route[] {
  const clients = new OidcClientService(deps);
  const before = [deps.requireApp];
  const parsePage = pageQueryParser({ maxPageSize: 1000, defaultPageSize: 100, cursor: CLIENT_ID_PATTERN, listed: 'OIDC client', sortable: true });
  const pageOf = (ctx: RequestContext) => parsePage(ctx, NO_FIELDS);
  const base = '/applications/:app/oidc-clients';
  return [
    {
      method: 'POST',
      path: base,
      before,
      // SPEC lists the list's paging parameters for this operation too: checked like the list's, and without effect.
      query: 'parsed',
      handle: async (ctx) => {
        pageOf(ctx);
        return ok(await clients.create(callerAppId(ctx.caller), parseJsonBody(ctx, ClientBodySchema)));
      },
    },
    {
      method: 'GET',
      path: base,
      before,
      query: 'parsed',
      handle: (ctx) => jsonBytes(clients.list(callerAppId(ctx.caller), pageOf(ctx))),
    },
    {
      method: 'GET',
      path: `${base}/:client`,
      before,
      handle: (ctx) => ok(clients.get(callerAppId(ctx.caller), ctx.params.client)),
    },
    {
      method: 'PUT',
      path: `${base}/:client`,
      before,
      handle: async (ctx) => {
        const body = parseJsonBody(ctx, ClientUpdateSchema);
        return ok(await clients.replace(callerAppId(ctx.caller), ctx.params.client, body));
      },
    },
    {
      method: 'DELETE',
      path: `${base}/:client`,
      before,
      handle: async (ctx) => {
        await clients.remove(callerAppId(ctx.caller), ctx.params.client);
        return noContent();
      },
    },
    {
      method: 'POST',
      path: `${base}/:client/credentials`,
      before,
      handle: async (ctx) => {
        const body = parseJsonBody(ctx, CredentialBodySchema);
        return ok(await clients.addCredential(callerAppId(ctx.caller), ctx.params.client, body));
      },
    },
    {
      method: 'DELETE',
      path: `${base}/:client/credentials/:client_id`,
      before,
      handle: async (ctx) => {
        await clients.removeCredential(callerAppId(ctx.caller), ctx.params.client, ctx.params.client_id);
        return noContent();
      },
    },
  ];
}
