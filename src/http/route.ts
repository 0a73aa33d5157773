import type { BodyKind } from './body.js';
import type { RequestContext } from './context.js';
import type { Reply } from './reply.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A named step before the handler: authentication, rate limiting. It throws to refuse. */
export type Step = (ctx: RequestContext) => void | Promise<void>;

export interface Route {
  method: Method;
  /** uWS pattern: `/applications/:app/users/:user/data`. */
  path: string;
  before?: Step[];
  /** Body media types the route accepts; POST, PUT, PATCH and DELETE default to JSON. */
  body?: readonly BodyKind[];
  /**
   * A cap in bytes below the configured ones, for a route anyone may call whose body is a few short
   * fields: parsing a body of the JSON cap can take the loop half a second (many small objects).
   */
  maxBody?: number;
  /**
   * What the route does with a query string: `parsed` by its handler, or `ignored` (a link's
   * redemption, to which mail tools append parameters). Without it, any query is 400: a typo in a
   * parameter is never silently dropped, least of all on a write.
   */
  query?: 'parsed' | 'ignored';
  /** A GET that changes state (a link's redemption): no HEAD is made of it, as link checkers send HEAD freely. */
  changesState?: true;
  /** Called by apps' browser clients: CORS answers the origins registered by their OIDC clients too (`HttpServerOptions.clientOrigins`). */
  forBrowserClients?: true;
  handle(ctx: RequestContext): Reply | Promise<Reply>;
}

/** Methods whose body is read. A DELETE's must carry nothing (none, or `{}`): one it ignored would delete all the same. */
export const METHODS_WITH_BODY: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function paramNames(path: string): string[] {
  return path
    .split('/')
    .filter((segment) => segment.startsWith(':'))
    .map((segment) => segment.slice(1));
}

export function patternRegExp(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}$`);
}
