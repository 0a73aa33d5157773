import type { Deps } from './deps.js';
import type { Route } from './http/route.js';
import { createHttpServer, type HttpServer } from './http/server.js';
import { systemRoutes } from './features/system/routes.js';
import { applicationRoutes } from './features/applications/routes.js';
import { oidcClientRoutes } from './features/oidc-clients/routes.js';
import { userRoutes } from './features/users/routes.js';
import { adminRoutes } from './features/admin/routes.js';
import { groupRoutes } from './features/groups/routes.js';
import { sessionRoutes } from './features/sessions/routes.js';
import { magicLinkRoutes } from './features/magic-links/routes.js';

/** Every route of the service, feature by feature. */
export function buildRoutes(deps: Deps): Route[] {
  const routes = limitHubRoutes(deps, [
    ...systemRoutes(deps),
    ...applicationRoutes(deps),
    ...oidcClientRoutes(deps),
    ...userRoutes(deps),
    ...adminRoutes(deps),
    ...groupRoutes(deps),
    ...sessionRoutes(deps),
    ...magicLinkRoutes(deps),
  ]);
  return routes.map((route) => (calledByBrowserClients(deps, route) ? { ...route, forBrowserClients: true } : route));
}

/**
 * What an app's browser client calls: `/me` (its bearer token), `/hub` (sign-in, tokens, keys, app config)
 * and the discovery document. Not a route that takes the app secret (`POST /hub/auth/magic`), which a
 * browser must never hold, nor the platform and `/admin` routes: for those only `SVC_CORS_ORIGINS` counts.
 */
const calledByBrowserClients = (deps: Deps, route: Route) =>
  /^\/(me|hub|\.well-known)\//.test(route.path) && !route.before?.includes(deps.requireApp);

/**
 * Every `/hub/*` route is throttled per client IP before anything else runs: the sign-in endpoints
 * (ADDENDUM §8), and `/hub/app-config`, which takes a publishable key alone and would otherwise be an
 * unbounded oracle for guessing keys (not the key's own bucket: anyone may read a public key and drain it).
 */
function limitHubRoutes(deps: Deps, routes: Route[]): Route[] {
  return routes.map((route) => (route.path.startsWith('/hub/') ? { ...route, before: [deps.limitHub, ...(route.before ?? [])] } : route));
}

/** Builds the HTTP server without listening, so tests and main share it (tests may add probe routes). */
export function createApp(deps: Deps, extraRoutes: Route[] = []): HttpServer {
  const { config, metrics, logger } = deps;
  return createHttpServer({
    routes: [...buildRoutes(deps), ...extraRoutes],
    limits: { json: config.jsonLimit, multipart: config.multipartLimit },
    logger,
    corsOrigins: config.corsOrigins,
    clientOrigins: deps.clientOrigins,
    corsHeaders: [config.names.appKeyHeader, config.names.appSecretHeader],
    observe: metrics.requestRecorder,
  });
}
