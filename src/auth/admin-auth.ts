import { createHash, timingSafeEqual } from 'node:crypto';
import { bearerRequired, tokenRefused } from '../lib/errors.js';
import type { Step } from '../http/route.js';
import type { RequestContext } from '../http/context.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { clientNetwork } from './rate-limited-steps.js';

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * The operator step: `Authorization: Bearer <SVC_ADMIN_TOKEN>`. Both sides are hashed to a fixed
 * length first so the comparison takes the same time whatever the caller sent. A refused token takes
 * one of the client IP's `failures` tokens; once they are spent, every request of that client is 429,
 * the right token too: a guess let through while the others are refused would show itself.
 */
export function requireAdminToken(adminToken: string, failures: RateLimiter, trustedProxies: number): Step {
  const expected = digest(adminToken);
  const check = (ctx: RequestContext) => {
    const match = /^Bearer +(\S+)$/i.exec(ctx.header('authorization') ?? '');
    if (!match || !timingSafeEqual(digest(match[1]), expected)) {
      const message = 'A valid admin bearer token is required';
      throw match ? tokenRefused(message) : bearerRequired(message);
    }
    ctx.caller = { kind: 'admin' };
  };
  // With the limit off the address is not read (as `limitByIp`).
  if (!failures.enabled) return check;
  return (ctx) => {
    const client = clientNetwork(ctx, trustedProxies);
    failures.refuseIfSpent(client);
    try {
      check(ctx);
    } catch (refused) {
      failures.take(client);
      throw refused;
    }
  };
}
