import type { Deps } from '../../deps.js';
import type { Route } from '../../http/route.js';
import { createGroupsFeature } from './feature.js';
import { groupResourceRoutes } from './group-routes.js';
import { inviteRoutes } from './invite-routes.js';
import { memberRoutes } from './member-routes.js';

/** Every route of groups, members and invites (ADDENDUM §5). */
export function groupRoutes(deps: Deps): Route[] {
  const feature = createGroupsFeature(deps);
  return [...groupResourceRoutes(feature), ...memberRoutes(feature), ...inviteRoutes(feature)];
}
