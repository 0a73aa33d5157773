import type { Deps } from './deps.js';
import type { Route } from './http/route.js';
import { createHttpServer, type HttpServer } from './http/server.js';
import { systemRoutes } from './features/system/routes.js';
import { applicationRoutes } from './features/applications/routes.js';
import { adminRoutes } from './features/admin/routes.js';

/** Every route of the service, feature by feature. */
export function buildRoutes(deps: Deps): Route[] {
  return [...systemRoutes(deps), ...applicationRoutes(deps), ...adminRoutes(deps)];
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
    observe: metrics.observeRequest,
  });
}
