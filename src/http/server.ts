import { STATUS_CODES } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { ApiError, errorBody, internalError, validationError } from '../lib/errors.js';
import { bodyLimit, checkDeclaredLength, collectBody, parseBody, type BodyLimits } from './body.js';
import type { RequestContext } from './context.js';
import { HttpRequestContext } from './request-context.js';
import type { Reply } from './reply.js';
import { METHODS_WITH_BODY, paramNames, patternRegExp, type Route, type Step } from './route.js';
import { listenExclusive, uws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from './uws.js';

/** Counts one answer of the route and method it was bound to. */
export interface RequestRecorder {
  (status: number, seconds: number): void;
}

/**
 * Binds a recorder to a route and method. Asked once per route as it is mounted, but per request for
 * the fallback (any method lands there), so it must answer the same recorder each time.
 */
export interface RequestObserver {
  (route: string, method: string): RequestRecorder;
}

export interface HttpServerOptions {
  routes: Route[];
  limits: BodyLimits;
  logger: Logger;
  corsOrigins: readonly string[];
  /** Header names the CORS preflight allows besides the standard ones (the brand's app-key headers). */
  corsHeaders: readonly string[];
  observe?: RequestObserver;
}

export interface HttpServer {
  readonly app: TemplatedApp;
  listen(host: string, port: number): Promise<number>;
  /**
   * Stops accepting connections and resolves once in-flight requests are answered, or after
   * `graceMs` with the number still unanswered (a client that never finishes its body must not hold
   * the process up).
   */
  drain(graceMs?: number): Promise<number>;
  /** Closes every open connection (after `drain`). */
  close(): void;
}

const STATUS_LINES = new Map<number, string>();
const statusLine = (status: number) => {
  let line = STATUS_LINES.get(status);
  if (!line) STATUS_LINES.set(status, (line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`));
  return line;
};

const ALL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export function createHttpServer(options: HttpServerOptions): HttpServer {
  const app = uws.App();
  const { logger, limits, observe } = options;
  const debug = logger.isLevelEnabled('debug');
  const allowAnyOrigin = options.corsOrigins.includes('*');
  const allowedOrigins = new Set(options.corsOrigins);
  const requestIdPrefix = randomBytes(4).toString('hex') + '-';
  let requestCounter = 0;
  let inFlight = 0;
  let drained: (() => void) | undefined;
  let listenSocket: us_listen_socket | undefined;

  const compiled = options.routes.map((route) => ({ route, regexp: patternRegExp(route.path) }));

  function corsOrigin(ctx: RequestContext): string | undefined {
    const origin = ctx.headers.origin;
    if (origin && (allowAnyOrigin || allowedOrigins.has(origin))) return origin;
    return undefined;
  }

  function send(ctx: RequestContext, reply: Reply, record: RequestRecorder | undefined): void {
    inFlight--;
    if (ctx.aborted) return finishDrain();
    const { res } = ctx;
    let payload: Uint8Array | string = '';
    let contentType = reply.contentType;
    if (reply.bytes !== undefined) payload = reply.bytes;
    else if (reply.body !== undefined) {
      payload = JSON.stringify(reply.body);
      contentType ??= 'application/json';
    }
    const origin = corsOrigin(ctx);
    const close = reply.status === 413;
    res.cork(() => {
      res.writeStatus(statusLine(reply.status));
      if (contentType) res.writeHeader('content-type', contentType);
      res.writeHeader('x-request-id', ctx.id);
      res.writeHeader('x-content-type-options', 'nosniff');
      res.writeHeader('cache-control', 'no-store');
      if (origin) {
        res.writeHeader('access-control-allow-origin', origin);
        res.writeHeader('vary', 'origin');
        res.writeHeader('access-control-expose-headers', 'x-request-id, retry-after');
      }
      if (reply.headers) for (const name in reply.headers) res.writeHeader(name, reply.headers[name]);
      // No arguments: an explicit undefined length makes uWS announce a bogus Content-Length.
      if (reply.status === 204 || reply.status === 304) res.endWithoutBody();
      else res.end(payload, close);
    });
    const seconds = (performance.now() - ctx.startedAt) / 1000;
    record?.(reply.status, seconds);
    // The route pattern, never the path or query: those may carry link IDs and tokens. No headers, no bodies.
    if (debug) {
      logger.debug({ requestId: ctx.id, route: ctx.route, status: reply.status, ms: seconds * 1000 }, 'request');
    }
    finishDrain();
  }

  function finishDrain() {
    if (inFlight === 0 && drained) drained();
  }

  function errorReply(ctx: RequestContext, error: unknown): Reply {
    if (!(error instanceof ApiError)) {
      logger.error({ err: error, requestId: ctx.id, route: ctx.route }, 'unhandled error');
      error = internalError();
    } else if (error.status >= 500) {
      logger.warn({ requestId: ctx.id, route: ctx.route, code: error.code }, error.message);
    }
    const apiError = error as ApiError;
    return { status: apiError.status, body: errorBody(apiError), headers: apiError.headers };
  }

  function respond(ctx: RequestContext, outcome: Reply | Promise<Reply>, record: RequestRecorder | undefined): void {
    if (outcome instanceof Promise) {
      outcome.then(
        (reply) => send(ctx, reply, record),
        (error) => send(ctx, errorReply(ctx, error), record),
      );
    } else send(ctx, outcome, record);
  }

  function runSteps(route: Route, ctx: RequestContext, from: number): Reply | Promise<Reply> {
    const steps = route.before ?? [];
    for (let i = from; i < steps.length; i++) {
      const pending = steps[i](ctx);
      if (pending instanceof Promise) return pending.then(() => runSteps(route, ctx, i + 1));
    }
    return route.handle(ctx);
  }

  function makeContext(route: string, res: HttpResponse, req: HttpRequest, names: string[]): RequestContext {
    return new HttpRequestContext(requestIdPrefix + (++requestCounter).toString(36), route, res, req, names);
  }

  function decodeParams(ctx: RequestContext): void {
    for (const name in ctx.params) {
      const raw = ctx.params[name];
      if (raw.includes('%')) {
        try {
          ctx.params[name] = decodeURIComponent(raw);
        } catch {
          throw validationError({ [name]: ['malformed percent-encoding in path'] });
        }
      }
    }
  }

  function mount(route: Route): void {
    const names = paramNames(route.path);
    const routeName = `${route.method} ${route.path}`;
    const hasBody = METHODS_WITH_BODY.has(route.method);
    const accepted = route.body ?? (hasBody ? (['json'] as const) : []);
    const record = observe?.(routeName, route.method);
    const handler = (res: HttpResponse, req: HttpRequest) => {
      const ctx = makeContext(routeName, res, req, names);
      inFlight++;
      if (debug) logger.debug({ requestId: ctx.id, route: routeName }, 'request started');
      let cancelBody: (() => void) | undefined;
      res.onAborted(() => {
        ctx.aborted = true;
        cancelBody?.();
      });
      let outcome: Reply | Promise<Reply>;
      try {
        decodeParams(ctx);
        if (hasBody) {
          const contentType = ctx.headers['content-type'];
          const limit = bodyLimit(contentType, limits);
          checkDeclaredLength(ctx.headers['content-length'], limit);
          const collecting = collectBody(res, limit);
          cancelBody = collecting.cancel;
          outcome = collecting.body.then((raw) => {
            ctx.body = parseBody(raw, contentType, accepted);
            return runSteps(route, ctx, 0);
          });
        } else outcome = runSteps(route, ctx, 0);
      } catch (error) {
        outcome = errorReply(ctx, error);
      }
      respond(ctx, outcome, record);
    };
    const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'del';
    app[method === ('delete' as string) ? 'del' : method](route.path, handler);
  }

  options.routes.forEach(mount);

  const preflightHeaders = ['authorization', 'content-type', 'x-request-id', ...options.corsHeaders].join(', ');
  const recordPreflight = observe?.('OPTIONS *', 'OPTIONS');
  app.options('/*', (res, req) => {
    const ctx = makeContext('OPTIONS *', res, req, []);
    inFlight++;
    res.onAborted(() => {
      ctx.aborted = true;
    });
    const headers: Record<string, string> = {
      'access-control-allow-methods': ALL_METHODS.join(', '),
      'access-control-allow-headers': preflightHeaders,
      'access-control-max-age': '600',
    };
    send(ctx, { status: 204, headers: corsOrigin(ctx) ? headers : {} }, recordPreflight);
  });

  app.any('/*', (res, req) => {
    const ctx = makeContext('fallback', res, req, []);
    inFlight++;
    res.onAborted(() => {
      ctx.aborted = true;
    });
    const allowed = compiled.filter((c) => c.regexp.test(ctx.path)).map((c) => c.route.method);
    const error =
      allowed.length > 0
        ? new ApiError(405, 'E_METHOD_NOT_ALLOWED', `Method ${ctx.method} is not allowed on ${ctx.path}`, {
            headers: { allow: [...new Set(allowed)].join(', ') },
          })
        : new ApiError(404, 'E_NOT_FOUND', `No route for ${ctx.method} ${ctx.path}`);
    send(ctx, errorReply(ctx, error), observe?.(ctx.route, ctx.method));
  });

  return {
    app,
    listen(host, port) {
      return new Promise((resolve, reject) => {
        listenExclusive(app, host, port, (socket) => {
          if (!socket) return reject(new Error(`Cannot listen on ${host}:${port} (is the port in use?)`));
          listenSocket = socket;
          resolve(uws.us_socket_local_port(socket as never));
        });
      });
    },
    drain(graceMs = Infinity) {
      if (listenSocket) uws.us_listen_socket_close(listenSocket);
      listenSocket = undefined;
      if (inFlight === 0) return Promise.resolve(0);
      return new Promise((resolve) => {
        const timer = Number.isFinite(graceMs) ? setTimeout(() => resolve(inFlight), graceMs) : undefined;
        drained = () => {
          clearTimeout(timer);
          resolve(0);
        };
      });
    },
    close() {
      // Present on the native app though missing from the package's type declarations.
      (app as unknown as { close(): void }).close();
    },
  };
}

export type { Step };
