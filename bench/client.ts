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
  /** The publishable key header alone (front-end routes). */
  readonly keyHeader: Record<string, string>;
  /** Answers the parsed JSON body of a 2xx; throws RouteUnavailable or an Error naming status and body. */
  call(method: string, path: string, options?: CallOptions): Promise<any>;
}

export function serviceClient(baseUrl: string, app: AppCredentials, brand = 'svc'): ServiceClient {
  const platformHeaders = { [`x-${brand}-app-key`]: app.key, [`x-${brand}-app-secret`]: app.secret };
  return {
    baseUrl,
    app,
    platformHeaders,
    keyHeader: { [`x-${brand}-app-key`]: app.key },
    async call(method, path, options = {}) {
      const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
      if (options.platform) Object.assign(headers, platformHeaders);
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      let body: string | undefined;
      if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers['content-type'] = 'application/json';
      }
      const response = await fetch(baseUrl + path, { method, headers, body, redirect: 'manual' });
      const text = await response.text();
      const parsed = text && (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text;
      if (response.ok) return parsed;
      const unknownRoute = response.status === 405 || (response.status === 404 && parsed?.code === 'E_NOT_FOUND');
      if (unknownRoute) throw new RouteUnavailable(method, path, response.status);
      throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
    },
  };
}

/** Runs `task(0..total-1)` with at most `concurrency` in flight. */
export async function runConcurrently(total: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < total) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
}
