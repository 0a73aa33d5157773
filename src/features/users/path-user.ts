import { notFound } from '../../lib/errors.js';
import type { RequestContext } from '../../http/context.js';
import { isUserId } from './schemas.js';

/**
 * The path's user on a route about an existing user. An ID no user can have names no user: 404
 * `E_USER_NOT_FOUND`, as for any unknown one (a group path answers a malformed ID so too), before it
 * becomes a key or a lock.
 */
export function existingUserId(ctx: RequestContext): string {
  const userId = ctx.params.user;
  if (!isUserId(userId)) throw notFound('user', userId);
  return userId;
}
