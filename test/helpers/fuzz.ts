import type { Test } from 'tap';
import { startServerWithSchema } from './schema.js';
import type { RawResponse } from './raw-http.js';
import type { TestResponse } from './server.js';
import { manualClock } from '../../src/lib/clock.js';
import { drawn, seededRandom } from './seeded-random.js';
import type { AppSchema } from '../../src/features/applications/schemas.js';

/**
 * A fuzz run's settings, each from the environment when given: `FUZZ_SEED` replays another run,
 * `FUZZ_PER_ROUTE` and `FUZZ_PER_RULE` send more mutations per route and per input rule. The seed is
 * told in the test's output, and `random`/`pick` draw from it.
 */
export function fuzzRun(t: Test, defaults: { perRoute: number; perRule: number }) {
  const seed = Number(process.env.FUZZ_SEED ?? 20261127);
  const perRoute = Number(process.env.FUZZ_PER_ROUTE ?? defaults.perRoute);
  const perRule = Number(process.env.FUZZ_PER_RULE ?? defaults.perRule);
  t.comment(`fuzz seed ${seed} (replay with FUZZ_SEED=${seed})`);
  const random = seededRandom(seed);
  const pick = <T>(items: T[], count: number): T[] => drawn(random, items, count);
  return { seed, perRoute, perRule, random, pick };
}

/**
 * The server a fuzz test mutates requests against (a standing clock, the admin API on), with the headers
 * of its three kinds of caller and `ok`/`platform` for setting up its data (a non-2xx answer throws).
 */
export async function startFuzzServer(t: Test, schema: AppSchema) {
  const adminToken = 'admin-token-0123456789';
  const server = await startServerWithSchema(t, schema, { clock: manualClock(), env: { SVC_ADMIN_TOKEN: adminToken } });
  const { deps, app } = server;
  const names = deps.config.names;
  async function ok(response: Promise<TestResponse>, what: string): Promise<any> {
    const res = await response;
    if (res.status >= 300) throw new Error(`${what} answered ${res.status}: ${res.text}`);
    return res.body;
  }
  return {
    server,
    deps,
    app,
    names,
    appHeaders: [`${names.appKeyHeader}: ${app.key}`, `${names.appSecretHeader}: ${app.secret}`],
    adminHeaders: [`authorization: Bearer ${adminToken}`],
    bearer: (token: string) => [`authorization: Bearer ${token}`],
    ok,
    platform: (method: string, path: string, body?: unknown) =>
      ok(server.request(method, `/applications/${app.id}${path}`, { app, body }), `${method} ${path}`),
  };
}

/** ADDENDUM §7's codes and their statuses (E_<RESOURCE>_NOT_FOUND aside). */
const STATUS_OF_CODE: Record<string, number> = {
  E_VALIDATION: 400, E_BAD_JSON: 400, E_USER_UPDATE_FAILED: 400, E_INVALID_REFRESH_TOKEN: 400,
  E_UNAUTHORIZED: 401, E_TOKEN_EXPIRED: 401, E_TOKEN_REVOKED: 401, E_USER_DISABLED: 401,
  E_FORBIDDEN: 403, E_NOT_FOUND: 404, E_METHOD_NOT_ALLOWED: 405,
  E_MEMBER_EXISTS: 409, E_LAST_OWNER: 409, E_INVITE_EXISTS: 409, E_INVALID_STATE_TRANSITION: 409, E_GROUP_NOT_OPEN: 409,
  E_LINK_EXPIRED: 410, E_PAYLOAD_TOO_LARGE: 413, E_UNSUPPORTED_MEDIA_TYPE: 415, E_RATE_LIMITED: 429, E_UNAVAILABLE: 503,
};
const REASONS: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 409: 'Conflict', 410: 'Gone', 413: 'Payload Too Large', 415: 'Unsupported Media Type', 429: 'Too Many Requests', 503: 'Service Unavailable' };

/** What is wrong with a refusal's body against ADDENDUM §7 (its shape, its code, the code's status), if anything. */
export function errorBodyProblem(response: RawResponse): string | undefined {
  let body: any;
  try {
    body = JSON.parse(response.body.toString('utf8'));
  } catch {
    return 'the error body is not JSON';
  }
  const wanted = /^E_[A-Z_]+_NOT_FOUND$/.test(body.code) ? 404 : STATUS_OF_CODE[body.code];
  if (wanted === undefined) return `code ${body.code} is not one of ADDENDUM §7`;
  if (wanted !== response.status) return `code ${body.code} comes with ${response.status}, not ${wanted}`;
  if (body.statusCode !== response.status) return 'statusCode differs from the HTTP status';
  if (body.error !== REASONS[response.status]) return `error is ${JSON.stringify(body.error)}, not the reason phrase`;
  if (typeof body.message !== 'string' || !Array.isArray(body.messages) || body.messages.length < 1 || body.messages.some((m: unknown) => typeof m !== 'string')) {
    return 'message or messages missing';
  }
  if (body.messages[0] !== body.message) return 'messages does not begin with the message';
  if (body.field_errors !== undefined && (typeof body.field_errors !== 'object' || Object.values(body.field_errors).some((v) => !Array.isArray(v)))) {
    return 'field_errors is not a map of arrays';
  }
  if (response.status === 429 && !response.headers['retry-after']) return '429 without retry-after';
  return undefined;
}

/** The origin the fuzz tests register in an OIDC client's `allowed_origins`. */
export const REGISTERED_ORIGIN = 'https://spa.example';

/**
 * The Origin header a fuzzed request carries, drawn from `random`: none, the registered one as given
 * or altered (case, a slash, the default port), `null`, or a random one. Any request may carry one:
 * it changes what the answer allows, never what it does.
 */
export function originOf(random: () => number): string | undefined {
  const host = Array.from({ length: 8 }, () => 'abcdefghijklmnopqrstuvwxyz0123456789'[Math.floor(random() * 36)]).join('');
  const origins = [undefined, undefined, REGISTERED_ORIGIN, REGISTERED_ORIGIN, REGISTERED_ORIGIN.toUpperCase(), `${REGISTERED_ORIGIN}/`, `${REGISTERED_ORIGIN}:443`, 'null', `https://${host}.example`];
  return origins[Math.floor(random() * origins.length)];
}

/** The routes browser clients call, where CORS answers an OIDC client's origin (API.md, CORS). */
export const isBrowserRoute = (method: string, path: string) =>
  path.startsWith('/me/') || path.startsWith('/.well-known/') || (path.startsWith('/hub/') && !(method === 'POST' && path === '/hub/auth/magic'));

/**
 * What is wrong with an answer's CORS headers for `origin` (SVC_CORS_ORIGINS empty): only the
 * registered origin is allowed, only on a browser route, with `vary: origin`. An answer of no route
 * (a path mutated into `/me/groups/`) is no browser route's and may allow none.
 */
export function corsProblem(browserRoute: boolean, origin: string | undefined, response: RawResponse): string | undefined {
  const wanted = origin === REGISTERED_ORIGIN && browserRoute ? origin : undefined;
  const given = response.headers['access-control-allow-origin'];
  const noRoute = response.status === 404 && response.body.includes('"E_NOT_FOUND"');
  if (given !== wanted && !(noRoute && given === undefined)) {
    return `access-control-allow-origin ${given ?? 'absent'} for the origin ${origin ?? '(none)'}, not ${wanted ?? 'absent'}`;
  }
  if (given && !/\borigin\b/i.test(response.headers.vary ?? '')) return 'access-control-allow-origin without vary: origin';
  return undefined;
}
