import { appKeyChallenge, appKeyRefused } from '../../lib/errors.js';
import { ok } from '../../http/reply.js';
import type { Route } from '../../http/route.js';
import type { Deps } from '../../deps.js';

/** `GET /hub/app-config`: what a front end needs to know of its app, from the publishable key alone. */
export function applicationRoutes(deps: Deps): Route[] {
  const keyHeader = deps.config.names.appKeyHeader;
  const challenge = appKeyChallenge(keyHeader);
  return [
    {
      method: 'GET',
      path: '/hub/app-config',
      handle(ctx) {
        const key = ctx.header(keyHeader);
        const appId = key ? deps.apps.appOfKey(key) : undefined;
        if (!appId) throw appKeyRefused(`A valid ${keyHeader} header is required`, challenge);
        const app = deps.apps.require(appId);
        return ok({ app: { id: app.id, name: app.name, schema: app.schema } });
      },
    },
  ];
}
