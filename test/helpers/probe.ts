import { ok } from '../../src/http/reply.js';
import { callerAppId, requireAppCredentials } from '../../src/auth/platform-auth.js';
import type { Deps } from '../../src/deps.js';
import type { Route } from '../../src/http/route.js';

export const probePath = (appId: string) => `/applications/${appId}/probe`;

/** A platform route shaped like every `/applications/{app}/…` feature route: for `startServer`'s `extraRoutes`. */
export const platformProbe = (deps: Deps): Route[] => [
  {
    method: 'GET',
    path: '/applications/:app/probe',
    before: [requireAppCredentials(deps.config, deps.apps)],
    handle: (ctx) => ok({ app: callerAppId(ctx.caller) }),
  },
];
