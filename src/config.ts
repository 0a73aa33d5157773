import * as v from 'valibot';
import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isIP } from 'node:net';
import type { RateLimit } from './http/rate-limit.js';
import { isHttpOrigin } from './lib/urls.js';

const intFromEnv = (min: number, max: number) =>
  v.pipe(v.string(), v.regex(/^\d+$/, 'must be a whole number'), v.transform(Number), v.minValue(min, `must be at least ${min}`), v.maxValue(max, `must be at most ${max}`));

/** `perSecond/burst`, or `0` for no limit; a limit lets at least one request through a second (`5/0` would refuse them all). */
const rateFromEnv = v.pipe(
  v.string(),
  v.regex(/^(0|\d+(\.\d+)?\/\d+)$/, 'must be "<per second>/<burst>" or 0'),
  v.transform((text) => {
    const [perSecond, burst] = text.split('/').map(Number);
    return { perSecond, burst: burst ?? 0 };
  }),
  v.check(({ perSecond, burst }) => (perSecond === 0 && burst === 0) || (perSecond > 0 && burst >= 1), 'a limit needs a rate above 0 and a burst of at least 1 (0 turns it off)'),
);

/**
 * The longest access-token lifetime `SVC_ACCESS_TOKEN_TTL` allows: what a process that cannot know
 * the lifetime a token was issued with (a CLI rotating keys, an old session) must assume.
 */
export const MAX_ACCESS_TOKEN_TTL_SECONDS = 86_400 * 30;

/** uWS closes, unanswered, a connection whose `content-length` has 10 digits or more: a larger cap could never be reached. */
const MAX_BODY_LIMIT = 999_999_999;

const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function isBaseUrl(text: string): boolean {
  // What is no URL at all has its own message.
  if (!URL.canParse(text)) return true;
  const url = new URL(text);
  return !/[\s?#]/.test(text) && url.username === '' && url.password === '';
}

/** An RFC 1123 host name, looked up only when listening: a name needs no DNS to be checked. */
const HOST_NAME = /^(?=.{1,253}\.?$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;

const EnvSchema = v.object({
  PORT: v.optional(intFromEnv(0, 65535), '3000'),
  HOST: v.optional(
    v.pipe(
      v.string(),
      // uWS hands it to getaddrinfo as is: brackets (`[::1]`), a port or a scheme never resolve.
      v.check((host) => isIP(host) !== 0 || HOST_NAME.test(host), 'must be an IP address or a host name (::1, not [::1]; no port or scheme)'),
    ),
    '127.0.0.1',
  ),
  SVC_DATA_DIR: v.optional(v.pipe(v.string(), v.minLength(1)), './data'),
  SVC_PUBLIC_URL: v.optional(
    v.pipe(
      v.string(),
      v.url('must be an absolute URL'),
      v.regex(/^https?:\/\//i, 'must be an http(s) URL'),
      // Links and the issuer are built by appending paths to it.
      v.check(isBaseUrl, 'must be a base URL: no query, fragment, user name or password, no spaces'),
    ),
  ),
  SVC_ADMIN_TOKEN: v.optional(
    v.pipe(
      v.string(),
      v.minLength(16, 'must be at least 16 characters'),
      // Sent as one bearer token, a token with a space (or a line end kept from a file) never matches.
      v.regex(/^\S*$/, 'must not contain whitespace'),
    ),
  ),
  SVC_BRAND: v.optional(v.pipe(v.string(), v.regex(/^[a-z0-9]+$/, 'lowercase letters and digits only')), 'svc'),
  SVC_LOG_LEVEL: v.optional(v.picklist(levels), 'info'),
  SVC_MAX_ACTORS: v.optional(intFromEnv(1, 10_000_000), '10000'),
  SVC_MAX_ACTOR_BYTES: v.optional(intFromEnv(1, 2 ** 40), String(32 << 20)),
  SVC_ACTOR_IDLE_MS: v.optional(intFromEnv(1000, 86_400_000), '60000'),
  SVC_SHUTDOWN_GRACE_MS: v.optional(intFromEnv(0, 3_600_000), '10000'),
  SVC_JSON_LIMIT: v.optional(intFromEnv(1, MAX_BODY_LIMIT), String(1 << 20)),
  SVC_MULTIPART_LIMIT: v.optional(intFromEnv(1, MAX_BODY_LIMIT), String(10 << 20)),
  SVC_CORS_ORIGINS: v.optional(
    v.pipe(
      v.string(),
      v.transform((text) => text.split(',').map((s) => s.trim()).filter(Boolean)),
      v.check(
        (origins) => origins.every((origin) => origin === '*' || isHttpOrigin(origin)),
        'a comma-separated list of origins as browsers send them, lower case with no default port or wildcard (https://app.example, http://localhost:5173), or * alone',
      ),
      // Beside `*` (any origin) a list would mean nothing: the operator meant one or the other.
      v.check((origins) => !origins.includes('*') || origins.length === 1, '* must stand alone (it allows any origin)'),
    ),
    '',
  ),
  SVC_ACCESS_TOKEN_TTL: v.optional(intFromEnv(60, MAX_ACCESS_TOKEN_TTL_SECONDS), '3600'),
  SVC_RATE_LIMIT_APP: v.optional(rateFromEnv, '20000/40000'),
  SVC_RATE_LIMIT_USER_WRITES: v.optional(rateFromEnv, '10/30'),
  SVC_RATE_LIMIT_HUB_IP: v.optional(rateFromEnv, '20/60'),
  SVC_RATE_LIMIT_ADMIN_FAILURES: v.optional(rateFromEnv, '1/10'),
  SVC_TRUSTED_PROXIES: v.optional(intFromEnv(0, 10), '0'),
});

export type Env = Record<string, string | undefined>;

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  publicUrl: string;
  adminToken?: string;
  brand: string;
  logLevel: (typeof levels)[number];
  maxActors: number;
  /** The stored bytes of the resident actors together (see `RuntimeOptions.maxActorBytes`). */
  maxActorBytes: number;
  actorIdleMs: number;
  /** How long a shutdown waits for requests in flight before it closes their connections. */
  shutdownGraceMs: number;
  jsonLimit: number;
  multipartLimit: number;
  corsOrigins: string[];
  accessTokenTtlSeconds: number;
  rateLimits: { app: RateLimit; userWrites: RateLimit; hubIp: RateLimit; adminFailures: RateLimit };
  /** How many proxies in front append to `X-Forwarded-For`: whose entries name the client. */
  trustedProxies: number;
  /** Names derived from the brand token (ADDENDUM §0). */
  names: {
    appKeyHeader: string;
    appSecretHeader: string;
    userField: string;
    reservedNamespace: string;
    claimPrefix: string;
  };
}

export class ConfigError extends Error {}

/**
 * Why `dataDir` can never be a directory: it, or the nearest of its parents that exists, is a file
 * (the data dir could be neither opened nor made; mkdir and stat would say only ENOTDIR or EEXIST).
 * An absent path is fine: it is made.
 */
function notDirectoryProblem(dataDir: string): string | undefined {
  // The root, where the walk ends, is a directory.
  for (let path = dataDir; path !== dirname(path); path = dirname(path)) {
    let stats;
    try {
      stats = statSync(path, { throwIfNoEntry: false });
    } catch (error) {
      // A parent further up is the file: look there.
      if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') continue;
      // Anything else (no access) is met, and reported, where the data dir is opened.
      return undefined;
    }
    if (stats === undefined) continue;
    if (stats.isDirectory()) return undefined;
    return path === dataDir ? `${path} is a file, not a directory` : `${dataDir} is under ${path}, a file, not a directory`;
  }
  return undefined;
}

export function loadConfig(env: Env): Config {
  const input = Object.fromEntries(Object.keys(EnvSchema.entries).map((k) => [k, env[k] === '' ? undefined : env[k]]));
  const parsed = v.safeParse(EnvSchema, input);
  if (!parsed.success) {
    const problems = parsed.issues.map((i) => `${v.getDotPath(i) ?? '?'}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const e = parsed.output;
  // Links and the token issuer are built from the public URL before the service listens, and the
  // default one would name port 0, which reaches nothing.
  if (e.PORT === 0 && e.SVC_PUBLIC_URL === undefined) {
    throw new ConfigError('Invalid configuration:\n  SVC_PUBLIC_URL: is required when PORT is 0 (any free port): links and tokens name it, and http://localhost:0 reaches nothing');
  }
  const dataDir = resolve(e.SVC_DATA_DIR);
  const notDir = notDirectoryProblem(dataDir);
  if (notDir !== undefined) throw new ConfigError(`Invalid configuration:\n  SVC_DATA_DIR: ${notDir}`);
  const brand = e.SVC_BRAND;
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    dataDir,
    publicUrl: (e.SVC_PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    adminToken: e.SVC_ADMIN_TOKEN,
    brand,
    logLevel: e.SVC_LOG_LEVEL,
    maxActors: e.SVC_MAX_ACTORS,
    maxActorBytes: e.SVC_MAX_ACTOR_BYTES,
    actorIdleMs: e.SVC_ACTOR_IDLE_MS,
    shutdownGraceMs: e.SVC_SHUTDOWN_GRACE_MS,
    jsonLimit: e.SVC_JSON_LIMIT,
    multipartLimit: e.SVC_MULTIPART_LIMIT,
    corsOrigins: e.SVC_CORS_ORIGINS,
    accessTokenTtlSeconds: e.SVC_ACCESS_TOKEN_TTL,
    rateLimits: {
      app: e.SVC_RATE_LIMIT_APP,
      userWrites: e.SVC_RATE_LIMIT_USER_WRITES,
      hubIp: e.SVC_RATE_LIMIT_HUB_IP,
      adminFailures: e.SVC_RATE_LIMIT_ADMIN_FAILURES,
    },
    trustedProxies: e.SVC_TRUSTED_PROXIES,
    names: Object.freeze({
      appKeyHeader: `x-${brand}-app-key`,
      appSecretHeader: `x-${brand}-app-secret`,
      userField: `${brand}_user`,
      reservedNamespace: `${brand}:`,
      claimPrefix: `https://auth.${brand}.io/`,
    }),
  });
}
