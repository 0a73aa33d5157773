import { createHash, timingSafeEqual } from 'node:crypto';
import { bearerRequired } from '../lib/errors.js';
import type { Step } from '../http/route.js';

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * The operator step: `Authorization: Bearer <SVC_ADMIN_TOKEN>`. Both sides are hashed to a fixed
 * length first so the comparison takes the same time whatever the caller sent.
 */
export function requireAdminToken(adminToken: string): Step {
  const expected = digest(adminToken);
  return (ctx) => {
    const match = /^Bearer +(\S+)$/i.exec(ctx.header('authorization') ?? '');
    if (!match || !timingSafeEqual(digest(match[1]), expected)) {
      throw bearerRequired('A valid admin bearer token is required');
    }
    ctx.caller = { kind: 'admin' };
  };
}
