import { noContent, ok } from '../../http/reply.js';
import type { Route } from '../../http/route.js';
import type { Deps } from '../../deps.js';
import { requireAdminToken } from '../../auth/admin-auth.js';
import { RateLimiter } from '../../http/rate-limit.js';
import { expectNoFields, parseJsonBody } from '../../lib/validate.js';
import { CreateAppSchema, UpdateAppSchema } from '../applications/schemas.js';
import { shownApp } from '../applications/store.js';

const listOf = <T>(results: T[]) => ({ total_results: results.length, results });

/**
 * The operator API (ADDENDUM §2): applications and their credentials. Without `SVC_ADMIN_TOKEN` it
 * has no routes at all, so every `/admin` path answers 404 like any unknown route.
 */
export function adminRoutes(deps: Deps): Route[] {
  const { adminToken, rateLimits, trustedProxies } = deps.config;
  if (!adminToken) return [];
  const { apps } = deps;
  const before = [requireAdminToken(adminToken, new RateLimiter(rateLimits.adminFailures, deps.clock), trustedProxies)];
  return [
    {
      method: 'POST',
      path: '/admin/applications',
      before,
      async handle(ctx) {
        const input = parseJsonBody(ctx, CreateAppSchema);
        return ok(shownApp(await apps.create(input.name, input.schema)));
      },
    },
    { method: 'GET', path: '/admin/applications', before, handle: () => ok(listOf(apps.list().map(shownApp))) },
    { method: 'GET', path: '/admin/applications/:app', before, handle: (ctx) => ok(shownApp(apps.require(ctx.params.app))) },
    {
      method: 'PATCH',
      path: '/admin/applications/:app',
      before,
      async handle(ctx) {
        const changes = parseJsonBody(ctx, UpdateAppSchema);
        return ok(shownApp(await apps.update(ctx.params.app, changes)));
      },
    },
    {
      method: 'POST',
      path: '/admin/applications/:app/credentials',
      before,
      async handle(ctx) {
        expectNoFields(ctx);
        return ok(await apps.createCredential(ctx.params.app));
      },
    },
    {
      method: 'GET',
      path: '/admin/applications/:app/credentials',
      before,
      handle: (ctx) => ok(listOf(apps.listCredentials(ctx.params.app))),
    },
    {
      method: 'DELETE',
      path: '/admin/applications/:app/credentials/:key',
      before,
      async handle(ctx) {
        await apps.revokeCredential(ctx.params.app, ctx.params.key);
        return noContent();
      },
    },
  ];
}
