import type { Route } from '../../http/route.js';
import type { Deps } from '../../deps.js';
import { ProfileFiles } from './profile-files.js';
import { ProfileService } from './service.js';
import { platformProfileRoutes } from './platform-routes.js';
import { meProfileRoutes } from './me-routes.js';

/** Every user-profile endpoint, platform and `/me`. */
export function userRoutes(deps: Deps): Route[] {
  const files = new ProfileFiles(deps.store, deps.logger, deps.imageDecodes);
  const service = new ProfileService(deps, files);
  return [...platformProfileRoutes(deps, service, files), ...meProfileRoutes(deps, service, files)];
}
