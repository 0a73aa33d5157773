import { STATUS_CODES } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { ApiError, errorBody, internalError, validationError } from '../lib/errors.js';
import { bodyLimit, checkContentCoding, checkDeclaredLength, collectBody, parseBody, type BodyLimits } from './body.js';
import type { RequestContext } from './context.js';
import { HttpRequestContext } from './request-context.js';
import type { Reply } from './reply.js';
import { writeSecurityHeaders } from './security-headers.js';
import { METHODS_WITH_BODY, paramNames, patternRegExp, type Route, type Step } from './route.js';
import { closeApp, listenExclusive, uws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from './uws.js';
import { NO_FIELDS, expectNoFields, parseQuery } from '../lib/validate.js';

/** Counts the requests of the route and method it was bound to. */
export interface RequestRecorder {
  /** One answered with `status`, `seconds` after it arrived. */
  answered(status: number, seconds: number): void;
  /** One whose client went away before its answer. */
  aborted(): void;
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
  /** Origins CORS answers too, on the routes `forBrowserClients` (and a preflight or refusal of their paths). */
  clientOrigins?: { has(origin: string): boolean };
  /** Header names the CORS preflight allows besides the standard ones (the brand's app-key headers). */
  corsHeaders: readonly string[];
  observe?: RequestObserver;
  /**
   * How long an answer the client is taking slowly may go without the client taking a byte of it
   * before its connection is closed (`ANSWER_STALL_MS` unless given).
   */
  answerStallMs?: number;
}

/**
 * A client that stops reading an answer holds its bytes in memory (a page or profile of megabytes each):
 * after this long without taking any, its connection is closed.
 */
export const ANSWER_STALL_MS = 30_000;

export interface HttpServer {
  readonly app: TemplatedApp;
  listen(host: string, port: number): Promise<number>;
  /**
   * Stops accepting connections and resolves once in-flight requests are answered and their answers
   * written whole, or after `graceMs` with the number still unanswered or unwritten (a client that never
   * finishes its body, or never reads its answer, must not hold the process up).
   */
  drain(graceMs?: number): Promise<number>;
  /**
   * Closes every open connection (after `drain`), and resolves once no request is still being handled:
   * one cut off may be in a turn, which must end before the data dir closes under it.
   */
  close(): Promise<void>;
}

const STATUS_LINES = new Map<number, string>();
const statusLine = (status: number) => {
  let line = STATUS_LINES.get(status);
  if (!line) STATUS_LINES.set(status, (line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`));
  return line;
};

const ALL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** The route names of a CORS preflight and of a request no route takes. */
const PREFLIGHT = 'OPTIONS *';
const FALLBACK = 'fallback';

const ignoreAbort = () => {};

/**
 * An answer this size fits the socket's send buffer whole: `end` writes all of it at once (to a client
 * still reading), so only a larger one is ended by `endWhole`, which costs the hot reads' small answers
 * nothing.
 */
const SMALL_ANSWER = 16 * 1024;

const byteSize = (payload: Uint8Array | string) => (typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength);

export function createHttpServer(options: HttpServerOptions): HttpServer {
  const app = uws.App();
  const { logger, limits, observe, answerStallMs = ANSWER_STALL_MS } = options;
  const debug = logger.isLevelEnabled('debug');
  const allowAnyOrigin = options.corsOrigins.includes('*');
  const allowedOrigins = new Set(options.corsOrigins);
  const requestIdPrefix = randomBytes(4).toString('hex') + '-';
  let requestCounter = 0;
  let inFlight = 0;
  /** Answers handed to uWS whose bytes the client has not all taken yet (see `endWhole`). */
  let flushing = 0;
  /** Called once no request is in flight, and with `answersToo` once every answer is written too. */
  let idleWaiters: Array<{ answersToo: boolean; resolve: () => void }> = [];
  let listenSocket: us_listen_socket | undefined;
  let draining = false;
  /** Headers a request may give once: its framing, its host and its credentials. */
  const singleHeaders = new Set(['host', 'authorization', 'content-type', 'transfer-encoding', ...options.corsHeaders]);

  const compiled = options.routes.map((route) => ({ route, regexp: patternRegExp(route.path) }));
  /** Names (`ctx.route`) of the handlers of routes `forBrowserClients`, and those routes' patterns, for the paths no handler of its own takes. */
  const browserClientRoutes = new Set<string>();
  const browserClientPaths = compiled.filter((c) => c.route.forBrowserClients).map((c) => c.regexp);

  function corsOrigin(ctx: RequestContext): string | undefined {
    const origin = ctx.header('origin');
    // Browsers send one Origin: lines given more than once (combined by `header`) name none.
    if (ctx.repeatedHeaders?.includes('origin')) return undefined;
    if (origin && (allowAnyOrigin || allowedOrigins.has(origin))) return origin;
    if (origin && forBrowserClients(ctx) && options.clientOrigins?.has(origin)) return origin;
    return undefined;
  }

  function forBrowserClients(ctx: RequestContext): boolean {
    if (browserClientRoutes.has(ctx.route)) return true;
    return (ctx.route === PREFLIGHT || ctx.route === FALLBACK) && browserClientPaths.some((regexp) => regexp.test(ctx.path));
  }

  /**
   * Answers `ctx`. `inHandler`: uWS's request handler is still running, and uWS corks the socket for
   * all of it; an answer sent later corks its own writes (`res.cork`, whose callback from native code
   * costs ~0.3 µs: docs/PERFORMANCE.md, round 19).
   */
  function send(ctx: RequestContext, reply: Reply, record: RequestRecorder | undefined, inHandler: boolean): void {
    inFlight--;
    if (ctx.aborted) return finishDrain();
    if (inHandler) writeAnswer(ctx, reply);
    else ctx.res.cork(() => writeAnswer(ctx, reply));
    const seconds = (performance.now() - ctx.startedAt) / 1000;
    record?.answered(reply.status, seconds);
    // The route pattern, never the path or query: those may carry link IDs and tokens. No headers, no bodies.
    if (debug) {
      logger.debug({ requestId: ctx.id, route: ctx.route, status: reply.status, ms: seconds * 1000 }, 'request');
    }
    finishDrain();
  }

  /** The answer's status line, headers and body, written in one corked batch. */
  function writeAnswer(ctx: RequestContext, reply: Reply): void {
    const { res } = ctx;
    let payload: Uint8Array | string = '';
    let contentType = reply.contentType;
    if (reply.bytes !== undefined) payload = reply.bytes;
    else if (reply.body !== undefined) {
      payload = JSON.stringify(reply.body);
      contentType ??= 'application/json';
    }
    const origin = corsOrigin(ctx);
    // `connection: close` after a body refused unread (413, `refusedUnread`), and while draining for shutdown: keep-alive
    // clients then reconnect (and find the next server) rather than lose a request sent as the
    // connections close.
    const unread = reply.status === 413 || reply.closeConnection === true;
    const close = unread || draining;
    res.writeStatus(statusLine(reply.status));
    if (contentType) res.writeHeader('content-type', contentType);
    res.writeHeader('x-request-id', ctx.id);
    writeSecurityHeaders(res);
    if (origin) {
      res.writeHeader('access-control-allow-origin', origin);
      res.writeHeader('vary', 'origin');
      res.writeHeader('access-control-expose-headers', 'x-request-id, retry-after, www-authenticate');
    }
    if (reply.headers) for (const name in reply.headers) res.writeHeader(name, reply.headers[name]);
    if (reply.status === 204 || reply.status === 304) {
      // No arguments: an explicit length, even undefined, makes uWS announce a Content-Length (RFC 9110
      // forbids one on a 204). A close is then asked of the client.
      if (close) res.writeHeader('connection', 'close');
      res.endWithoutBody();
      return;
    }
    const size = byteSize(payload);
    if (ctx.method === 'HEAD') {
      // uWS takes an answer ended this way (with a length) for one still pending, and aborts the process
      // when the request handler returns without an abort handler (a synchronous answer has none: see `handlerOf`).
      res.onAborted(ignoreAbort);
      // uWS reads nothing more on a connection after a HEAD answer: the client is told to close it.
      res.endWithoutBody(size, true);
    } else if (unread || size <= SMALL_ANSWER) res.end(payload, close);
    else {
      if (close) res.writeHeader('connection', 'close');
      endWhole(res, payload, size);
    }
  }

  /**
   * Ends `res` with `payload`, which the client may take slowly (a large page over a slow link): until it
   * has taken all of it the answer counts in `flushing`, so a shutdown waits for it rather than cut it off;
   * a client that takes none of it for `answerStallMs` has its connection closed.
   */
  function endWhole(res: HttpResponse, payload: Uint8Array | string, size: number): void {
    const start = res.getWriteOffset();
    if (res.tryEnd(payload, size)[1]) return;
    const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload;
    flushing++;
    let written = false;
    let taken = res.getWriteOffset();
    const stalled = setInterval(() => {
      const offset = res.getWriteOffset();
      if (offset === taken) {
        // Done first: `res` may not be touched once closed, whether or not uWS calls `onAborted`.
        done();
        res.close();
      }
      taken = offset;
    }, answerStallMs);
    const done = () => {
      if (written) return;
      written = true;
      clearInterval(stalled);
      flushing--;
      finishDrain();
    };
    res.onAborted(done);
    res.onWritable((offset) => {
      const [ok, ended] = res.tryEnd(bytes.subarray(offset - start), size);
      if (ended) done();
      return ok;
    });
  }

  const quiet = (answersToo: boolean) => inFlight === 0 && (!answersToo || flushing === 0);

  function finishDrain() {
    if (inFlight > 0 || idleWaiters.length === 0) return;
    const waiting = idleWaiters;
    idleWaiters = waiting.filter((waiter) => !quiet(waiter.answersToo));
    for (const waiter of waiting) if (quiet(waiter.answersToo)) waiter.resolve();
  }

  /**
   * Settles once no request is in flight (every one answered, or its client gone and its handling over),
   * and with `answersToo` once every answer is written whole too.
   */
  const settled = (answersToo: boolean) =>
    quiet(answersToo) ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push({ answersToo, resolve }));

  function errorReply(ctx: RequestContext, error: unknown): Reply {
    if (!(error instanceof ApiError)) {
      logger.error({ err: error, requestId: ctx.id, route: ctx.route }, 'unhandled error');
      error = internalError();
    } else if (error.cause !== undefined) {
      // What failed underneath (a full disk, an I/O error), for an operator to tell it from a bug.
      logger.error({ err: error.cause, requestId: ctx.id, route: ctx.route, code: error.code }, error.message);
    } else if (error.status >= 500) {
      logger.warn({ requestId: ctx.id, route: ctx.route, code: error.code }, error.message);
    }
    const apiError = error as ApiError;
    return { status: apiError.status, body: errorBody(apiError), headers: apiError.headers };
  }

  /**
   * A request framed two ways (two lengths, or a length and chunks), or by a transfer coding other than
   * `chunked` alone, is cut off unanswered: uWS frames the first by its first header and any transfer
   * coding as chunks, and reads on after any answer, so what a proxy took for its body would be served
   * as a request of its own.
   */
  const framedInDoubt = (ctx: RequestContext) => {
    const transferEncoding = ctx.header('transfer-encoding');
    return (
      ctx.repeatedHeaders?.includes('content-length') === true ||
      (transferEncoding !== undefined && (ctx.header('content-length') !== undefined || transferEncoding.trim().toLowerCase() !== 'chunked'))
    );
  };

  /**
   * A refusal answered before the request's body is read closes the connection when that body is chunked
   * or declared longer than the JSON cap (a 413's rule): uWS would otherwise receive all of it, to drop it.
   */
  function refusedUnread(ctx: RequestContext, reply: Reply): Reply {
    const length = ctx.header('content-length');
    if (ctx.header('transfer-encoding') !== undefined || (length !== undefined && !(Number(length) <= limits.json))) {
      reply.closeConnection = true;
    }
    return reply;
  }

  /** 400 for a header naming the host or a credential given twice: which copy counts would be anyone's guess. */
  function checkSingleHeaders(ctx: RequestContext): void {
    const repeated = ctx.repeatedHeaders?.filter((name) => singleHeaders.has(name));
    if (!repeated?.length) return;
    throw validationError(Object.fromEntries(repeated.map((name) => [name, ['given more than once']])), 'E_VALIDATION', 'A header is given more than once');
  }

  function respond(ctx: RequestContext, outcome: Reply | Promise<Reply>, record: RequestRecorder | undefined): void {
    if (outcome instanceof Promise) {
      outcome.then(
        (reply) => send(ctx, reply, record, false),
        (error) => send(ctx, errorReply(ctx, error), record, false),
      );
    } else send(ctx, outcome, record, true);
  }

  /**
   * Runs the route's steps from `from`, then `readBody`, then its handler: a caller refused by a step
   * (credentials, rate limits) has its body received but never parsed.
   */
  function runSteps(route: Route, ctx: RequestContext, from: number, readBody?: () => void): Reply | Promise<Reply> {
    const steps = route.before ?? [];
    for (let i = from; i < steps.length; i++) {
      const pending = steps[i](ctx);
      if (pending instanceof Promise) return pending.then(() => runSteps(route, ctx, i + 1, readBody));
    }
    readBody?.();
    if (route.query === undefined && ctx.rawQuery !== '') parseQuery(ctx, NO_FIELDS);
    if (route.method === 'DELETE') expectNoFields(ctx);
    return route.handle(ctx);
  }

  /**
   * The request's context; undefined when the request's framing is in doubt, and its connection cut off:
   * counted and logged as a request without an answer.
   */
  function makeContext(route: string, res: HttpResponse, req: HttpRequest, names: string[], method?: string): RequestContext | undefined {
    const ctx = new HttpRequestContext(requestIdPrefix + (++requestCounter).toString(36), route, res, req, names, method);
    if (!framedInDoubt(ctx)) return ctx;
    res.close();
    unanswered(ctx, observe?.(route, ctx.method));
    return undefined;
  }

  function unanswered(ctx: RequestContext, record: RequestRecorder | undefined): void {
    record?.aborted();
    if (debug) logger.debug({ requestId: ctx.id, route: ctx.route }, 'request aborted');
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
    const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'del';
    app[method === ('delete' as string) ? 'del' : method](route.path, handlerOf(route, route.method));
    // HEAD answers what GET would, without the body (RFC 9110 §9.3.2).
    if (route.method === 'GET' && !route.changesState) app.head(route.path, handlerOf(route, 'HEAD'));
  }

  function handlerOf(route: Route, method: string): (res: HttpResponse, req: HttpRequest) => void {
    const names = paramNames(route.path);
    const routeName = `${method} ${route.path}`;
    const hasBody = METHODS_WITH_BODY.has(route.method);
    const accepted = route.body ?? (hasBody ? (['json'] as const) : []);
    const record = observe?.(routeName, method);
    if (route.forBrowserClients) browserClientRoutes.add(routeName);
    return (res: HttpResponse, req: HttpRequest) => {
      const ctx = makeContext(routeName, res, req, names, method);
      if (!ctx) return;
      inFlight++;
      if (debug) logger.debug({ requestId: ctx.id, route: routeName }, 'request started');
      let cancelBody: (() => void) | undefined;
      let outcome: Reply | Promise<Reply>;
      try {
        checkSingleHeaders(ctx);
        decodeParams(ctx);
        if (hasBody) {
          checkContentCoding(ctx.header('content-encoding'));
          const contentType = ctx.header('content-type');
          const limit = Math.min(bodyLimit(contentType, limits, accepted), route.maxBody ?? Infinity);
          checkDeclaredLength(ctx.header('content-length'), limit);
          const collecting = collectBody(res, limit);
          cancelBody = collecting.cancel;
          outcome = collecting.body.then((raw) =>
            runSteps(route, ctx, 0, () => {
              ctx.body = parseBody(raw, contentType, accepted);
            }),
          );
        } else outcome = runSteps(route, ctx, 0);
      } catch (error) {
        outcome = refusedUnread(ctx, errorReply(ctx, error));
      }
      // Only an answer that waits needs to hear of an abort (uWS asks for the handler before the
      // request handler returns); the rest are sent below, and an abort handler costs ~0.2 µs.
      if (outcome instanceof Promise) {
        res.onAborted(() => {
          ctx.aborted = true;
          cancelBody?.();
          unanswered(ctx, record);
        });
      }
      respond(ctx, outcome, record);
    };
  }

  options.routes.forEach(mount);

  const preflightHeaders = ['authorization', 'content-type', 'x-request-id', ...options.corsHeaders].join(', ');
  const recordPreflight = observe?.(PREFLIGHT, 'OPTIONS');
  app.options('/*', (res, req) => {
    const ctx = makeContext(PREFLIGHT, res, req, []);
    if (!ctx) return;
    inFlight++;
    const headers: Record<string, string> = {
      'access-control-allow-methods': ALL_METHODS.join(', '),
      'access-control-allow-headers': preflightHeaders,
      'access-control-max-age': '600',
    };
    send(ctx, { status: 204, headers: corsOrigin(ctx) ? headers : {} }, recordPreflight, true);
  });

  app.any('/*', (res, req) => {
    const ctx = makeContext(FALLBACK, res, req, []);
    if (!ctx) return;
    inFlight++;
    const allowed = compiled
      .filter((c) => c.regexp.test(ctx.path))
      .flatMap((c) => (c.route.method === 'GET' && !c.route.changesState ? ['GET', 'HEAD'] : [c.route.method]));
    const error =
      allowed.length > 0
        ? // Never the path: it may hold a link's ID.
          new ApiError(405, 'E_METHOD_NOT_ALLOWED', `Method ${ctx.method} is not allowed on this path`, {
            headers: { allow: [...new Set(allowed)].join(', ') },
          })
        : new ApiError(404, 'E_NOT_FOUND', `No route for ${ctx.method} on this path`);
    send(ctx, refusedUnread(ctx, errorReply(ctx, error)), observe?.(ctx.route, ctx.method), true);
  });

  return {
    app,
    async listen(host, port) {
      const listening = await listenExclusive(app, host, port);
      listenSocket = listening.socket;
      return listening.port;
    },
    drain(graceMs = Infinity) {
      draining = true;
      if (listenSocket) uws.us_listen_socket_close(listenSocket);
      listenSocket = undefined;
      if (quiet(true)) return Promise.resolve(0);
      return new Promise((resolve) => {
        const timer = Number.isFinite(graceMs) ? setTimeout(() => resolve(inFlight + flushing), graceMs) : undefined;
        void settled(true).then(() => {
          clearTimeout(timer);
          resolve(0);
        });
      });
    },
    close() {
      closeApp(app);
      return settled(false);
    },
  };
}

export type { Step };
