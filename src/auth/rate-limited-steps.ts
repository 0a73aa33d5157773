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

/** Limits by client address, before anything else runs (for the sign-in endpoints). */
export const limitByIp =
  (limiter: RateLimiter): Step =>
  (ctx) =>
    limiter.take(ctx.ip);
