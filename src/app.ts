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
  return limitSignInRoutes(deps, [
    ...systemRoutes(deps),
    ...applicationRoutes(deps),
    ...oidcClientRoutes(deps),
    ...userRoutes(deps),
    ...adminRoutes(deps),
    ...groupRoutes(deps),
    ...sessionRoutes(deps),
    ...magicLinkRoutes(deps),
  ]);
}

/** The sign-in endpoints are throttled per client IP before anything else runs (ADDENDUM §8). */
function limitSignInRoutes(deps: Deps, routes: Route[]): Route[] {
  return routes.map((route) =>
    route.path.startsWith('/hub/auth/') ? { ...route, before: [deps.limitSignIn, ...(route.before ?? [])] } : route,
  );
}

/** Builds the HTTP server without listening, so tests and main share it (tests may add probe routes). */
export function createApp(deps: Deps, extraRoutes: Route[] = []): HttpServer {
  const { config, metrics, logger } = deps;
  return createHttpServer({
    routes: [...buildRoutes(deps), ...extraRoutes],
    limits: { json: config.jsonLimit, multipart: config.multipartLimit },
    logger,
    corsOrigins: config.corsOrigins,
    corsHeaders: [config.names.appKeyHeader, config.names.appSecretHeader],
    observe: metrics.requestRecorder,
  });
}
