import { ok } from '../../http/reply.js';
import type { Route } from '../../http/route.js';
import type { Deps } from '../../deps.js';

export function systemRoutes(deps: Deps): Route[] {
  return [
    // Probes and scrapers may add a cache-buster: what a read of public state does not use, it ignores.
    { method: 'GET', path: '/health', query: 'ignored', handle: () => ok({ status: 'ok' }) },
    {
      method: 'GET',
      path: '/metrics',
      query: 'ignored',
      async handle() {
        return { status: 200, bytes: await deps.metrics.text(), contentType: deps.metrics.contentType };
      },
    },
  ];
}
