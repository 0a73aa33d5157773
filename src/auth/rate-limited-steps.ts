import { isIP } from 'node:net';
import { networkOf } from '../lib/ip-network.js';
import type { Step } from '../http/route.js';
import type { RequestContext } from '../http/context.js';
import type { RateLimiter } from '../http/rate-limit.js';

/** Runs `step`, then takes a token from `limiter` under the key it names for the now-known caller. */
export function thenLimit(step: Step, limiter: RateLimiter, keyOf: (ctx: RequestContext) => string | undefined): Step {
  if (!limiter.enabled) return step;
  const limit = (ctx: RequestContext) => {
    const key = keyOf(ctx);
    if (key !== undefined) limiter.take(key);
  };
  return (ctx) => {
    const pending = step(ctx);
    if (pending instanceof Promise) return pending.then(() => limit(ctx));
    limit(ctx);
  };
}

/** The client's network (`networkOf`), what per-IP limits are keyed by. */
export const clientNetwork = (ctx: RequestContext, trustedProxies: number): string => networkOf(clientAddress(ctx, trustedProxies));

/**
 * The client's address: the connection's, or behind `trustedProxies` proxies the `X-Forwarded-For`
 * entry the farthest of them appended, without a port. Entries left of it are the client's to write,
 * so not believed; with fewer entries than proxies the request did not come through them all, and the
 * connection's address counts.
 */
function clientAddress(ctx: RequestContext, trustedProxies: number): string {
  const forwarded = trustedProxies === 0 ? undefined : ctx.header('x-forwarded-for');
  if (forwarded === undefined) return ctx.ip;
  const hops = forwarded.split(',');
  if (hops.length < trustedProxies) return ctx.ip;
  const entry = hops[hops.length - trustedProxies].trim();
  const address = /^\[(.+)\]:\d+$/.exec(entry)?.[1] ?? /^([\d.]+):\d+$/.exec(entry)?.[1] ?? entry;
  return isIP(address) ? address : ctx.ip;
}

/**
 * Limits by client address, before anything else runs (for the `/hub/*` endpoints). With the limit off
 * the address is not read: uWS hands it out in an `ArrayBuffer` of its own per call.
 */
export const limitByIp = (limiter: RateLimiter, trustedProxies: number): Step => {
  if (!limiter.enabled) return () => {};
  return (ctx) => limiter.take(clientNetwork(ctx, trustedProxies));
};
