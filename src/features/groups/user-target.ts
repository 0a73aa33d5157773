import { notFound } from '../../lib/errors.js';
import type { Turn } from '../../runtime/runtime.js';
import { USER_KIND, userKey, userLock, type UserDirectory, type UserRef } from '../users/directory.js';

/** How a member or invite body's user is found: the locks to take, then `resolve` inside the turn. */
export interface UserTarget {
  locks: string[];
  resolve(turn: Turn): string;
}

/**
 * A `user_id` must name a user of the application (404 `E_USER_NOT_FOUND`); an email or phone
 * finds its user or creates one (ADDENDUM §5: "a user is ensured").
 */
export function userTarget(users: UserDirectory, appId: string, ref: UserRef): UserTarget {
  if ('user_id' in ref) {
    return {
      locks: [userLock(appId, ref.user_id)],
      resolve: (turn) => {
        if (!turn.get(USER_KIND, userKey(appId, ref.user_id))) throw notFound('user', ref.user_id);
        return ref.user_id;
      },
    };
  }
  const plan = users.planEnsure(appId, ref);
  return { locks: plan.locks, resolve: (turn) => plan.apply(turn).userId };
}
