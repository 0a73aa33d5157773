import { loadConfig, type Env } from '../../src/config.js';
import { openServices, closeServices } from '../../src/services.js';
import { createApp } from '../../src/app.js';
import { createLogger } from '../../src/lib/logger.js';
import type { Route } from '../../src/http/route.js';
import type { DestinationStream } from 'pino';
import { ensureDefaultApplication } from '../../src/features/applications/bootstrap.js';
import type { Clock } from '../../src/lib/clock.js';
import type { Deps } from '../../src/deps.js';
import type { MachineRegistry } from '../../src/runtime/machines.js';

export interface TestApp {
  id: string;
  key: string;
  secret: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as-is (FormData, raw strings); `body` is JSON-encoded instead. */
  rawBody?: BodyInit;
  headers?: Record<string, string>;
  /** App credentials to send as the platform headers. */
  app?: TestApp;
  /** Bearer token to send. */
  token?: string;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface TestServer {
  url: string;
  port: number;
  deps: Deps;
  /** The `default` application made on first start, with its one credential. */
  app: TestApp;
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  close(): Promise<void>;
}

interface Tap {
  testdir(fixture?: unknown): string;
  teardown(fn: () => unknown): void;
}

/** A real server on an ephemeral port over a real LMDB in a tap temp dir; closed at teardown. */
export async function startServer(
  t: Tap,
  options: {
    env?: Env;
    clock?: Clock;
    dataDir?: string;
    /** Routes mounted next to the service's own (probes for steps no feature route uses yet). */
    extraRoutes?: (deps: Deps) => Route[];
    /** Where log lines go (to inspect them); discarded by default through level `silent`. */
    logDestination?: DestinationStream;
    /** Actor kinds to run instead of the service's own. */
    machines?: MachineRegistry;
  } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? t.testdir();
  const config = loadConfig({
    SVC_LOG_LEVEL: 'silent',
    // Rate limits are off unless a test is about them.
    SVC_RATE_LIMIT_APP: '0',
    SVC_RATE_LIMIT_USER_WRITES: '0',
    SVC_RATE_LIMIT_HUB_IP: '0',
    SVC_RATE_LIMIT_ADMIN_FAILURES: '0',
    // PORT 0 needs one; links are redeemed here by their path.
    SVC_PUBLIC_URL: 'http://svc.test',
    ...options.env,
    SVC_DATA_DIR: dataDir,
    PORT: '0',
  });
  const logger = createLogger(config.logLevel, options.logDestination);
  const deps = await openServices(config, { clock: options.clock, logger, machines: options.machines });
  const created = await ensureDefaultApplication(deps.apps);
  const server = createApp(deps, options.extraRoutes?.(deps));
  const port = await server.listen('127.0.0.1', 0);
  const url = `http://127.0.0.1:${port}`;
  const app: TestApp = created
    ? { id: created.app.id, key: created.credential.key, secret: created.credential.secret }
    : { id: '', key: '', secret: '' };
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await server.drain();
    await server.close();
    await closeServices(deps);
  };
  t.teardown(close);
  return {
    url,
    port,
    deps,
    app,
    request: (method, path, requestOptions = {}) => request(url, deps, method, path, requestOptions),
    close,
  };
}

export async function request(
  url: string,
  deps: Deps,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<TestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  let body: BodyInit | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  if (options.app) {
    headers[deps.config.names.appKeyHeader] = options.app.key;
    headers[deps.config.names.appSecretHeader] = options.app.secret;
  }
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(url + path, { method, headers, body, redirect: 'manual' });
  const text = await response.text();
  let parsed: unknown = undefined;
  if ((response.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/**
 * `secret` with its first character changed: always wrong. Not the last: in base64url that one may
 * carry padding bits no decoder reads (an Ed25519 signature's last 4), so `…A` → `…B` could be the same token.
 */
export const alteredSecret = (secret: string) => `${secret.startsWith('A') ? 'B' : 'A'}${secret.slice(1)}`;
