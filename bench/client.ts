import { Agent, request, type RequestOptions } from 'node:http';
import type { AppCredentials } from './service-process.js';

/** The route does not answer yet (404 unknown route or 405): the scenario is skipped, not failed. */
export class RouteUnavailable extends Error {
  constructor(method: string, path: string, status: number) {
    super(`route not available (${status}): ${method} ${path.split('?')[0]}`);
  }
}

export interface CallOptions {
  body?: unknown;
  token?: string;
  /** Send the app key and secret headers (platform auth). */
  platform?: boolean;
  headers?: Record<string, string>;
}

export interface ServiceClient {
  readonly baseUrl: string;
  readonly app: AppCredentials;
  /** The platform auth headers, as wrk must send them. */
  readonly platformHeaders: Record<string, string>;
  /** The profile field holding the user ID (`<brand>_user`). */
  readonly userField: string;
  /** The publishable key header alone (front-end routes). */
  readonly keyHeader: Record<string, string>;
  /** Answers the parsed JSON body of a 2xx; throws RouteUnavailable or an Error naming status and body. */
  call(method: string, path: string, options?: CallOptions): Promise<any>;
}

/** How long one call may wait for its whole answer: far above any route's, so only a hung one fails. */
const CALL_TIMEOUT_MS = 60_000;

/**
 * node:http with keep-alive: on this machine it drives ~12k req/s from one process where `fetch`
 * managed ~3k, and seeding a million users runs through here.
 */
export function serviceClient(baseUrl: string, app: AppCredentials, brand = 'svc', timeoutMs = CALL_TIMEOUT_MS): ServiceClient {
  const platformHeaders = { [`x-${brand}-app-key`]: app.key, [`x-${brand}-app-secret`]: app.secret };
  const { hostname, port } = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  return {
    baseUrl,
    app,
    platformHeaders,
    keyHeader: { [`x-${brand}-app-key`]: app.key },
    userField: `${brand}_user`,
    async call(method, path, options = {}) {
      const headers: Record<string, string | number> = { accept: 'application/json', ...options.headers };
      if (options.platform) Object.assign(headers, platformHeaders);
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      let body: string | undefined;
      if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers['content-type'] = 'application/json';
        headers['content-length'] = Buffer.byteLength(body);
      }
      const { status, contentType, text } = await send({ agent, host: hostname, port, method, path, headers }, body, timeoutMs);
      const parsed = text && contentType.includes('json') ? JSON.parse(text) : text;
      if (status >= 200 && status < 300) return parsed;
      const unknownRoute = status === 405 || (status === 404 && parsed?.code === 'E_NOT_FOUND');
      if (unknownRoute) throw new RouteUnavailable(method, path, status);
      throw new Error(`${method} ${path} answered ${status}: ${text.slice(0, 300)}`);
    },
  };
}

/** One request and its whole answer, or an error naming its method and path (not its query: it may hold a token) past `timeoutMs`. */
function send(options: RequestOptions, body: string | undefined, timeoutMs: number): Promise<{ status: number; contentType: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(options, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'] ?? '', text });
      });
      res.on('error', fail);
    });
    const timer = setTimeout(() => {
      req.destroy(new Error(`${options.method} ${options.path?.split('?')[0]} got no answer within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    function fail(error: Error) {
      clearTimeout(timer);
      reject(error);
    }
    req.on('error', fail);
    req.end(body);
  });
}

/** Runs `task(0..total-1)` with at most `concurrency` in flight. */
export async function runConcurrently(total: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < total) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
}
