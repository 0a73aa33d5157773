import { ok } from '../../http/reply.js';
import type { Route } from '../../http/route.js';
import type { Deps } from '../../deps.js';

export function systemRoutes(deps: Deps): Route[] {
  return [
    { method: 'GET', path: '/health', handle: () => ok({ status: 'ok' }) },
    {
      method: 'GET',
      path: '/metrics',
      async handle() {
        return { status: 200, bytes: await deps.metrics.text(), contentType: deps.metrics.contentType };
      },
    },
  ];
}
