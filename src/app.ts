import type { Deps } from './deps.js';
import type { Route } from './http/route.js';
import { createHttpServer, type HttpServer } from './http/server.js';
import { systemRoutes } from './features/system/routes.js';
import { applicationRoutes } from './features/applications/routes.js';
import { userRoutes } from './features/users/routes.js';

/** Every route of the service, feature by feature. */
export function buildRoutes(deps: Deps): Route[] {
  return [...systemRoutes(deps), ...applicationRoutes(deps), ...userRoutes(deps)];
}

/** Builds the HTTP server without listening, so tests and main share it. */
export function createApp(deps: Deps): HttpServer {
  const { config, metrics, logger } = deps;
  return createHttpServer({
    routes: buildRoutes(deps),
    limits: { json: config.jsonLimit, multipart: config.multipartLimit },
    logger,
    corsOrigins: config.corsOrigins,
    corsHeaders: [config.names.appKeyHeader, config.names.appSecretHeader],
    observe: metrics.observeRequest,
  });
}
