import { notFound } from '../../lib/errors.js';
import type { Turn } from '../../runtime/runtime.js';
import type { Hold } from '../../runtime/holding.js';
import { USER_KIND, userKey, userLock, type UserDirectory, type UserRef } from '../users/directory.js';

/** The body field that names the user: `user_id`, `email` or `phone`. */
export const refField = (ref: UserRef): 'user_id' | 'email' | 'phone' => ('user_id' in ref ? 'user_id' : 'email' in ref ? 'email' : 'phone');

/** How a member or invite body's user is found: the locks to take, then `resolve` inside the turn. */
export interface UserTarget {
  /** The body field that named the user, for refusals about it. */
  field: ReturnType<typeof refField>;
  locks: string[];
  /** The user's ID; the turn then holds the user's lock, so the user cannot be deleted under it. */
  resolve(turn: Turn, hold: Hold): string;
}

/**
 * A `user_id` must name a user of the application (404 `E_USER_NOT_FOUND`); an email or phone
 * finds its user or creates one (ADDENDUM §5: "a user is ensured").
 */
export function userTarget(users: UserDirectory, appId: string, ref: UserRef): UserTarget {
  if ('user_id' in ref) {
    return {
      field: 'user_id',
      locks: [userLock(appId, ref.user_id)],
      resolve: (turn) => {
        if (!turn.get(USER_KIND, userKey(appId, ref.user_id))) throw notFound('user', ref.user_id);
        return ref.user_id;
      },
    };
  }
  const plan = users.planEnsure(appId, ref);
  return {
    field: refField(ref),
    locks: plan.locks,
    resolve: (turn, hold) => {
      const { userId } = plan.apply(turn);
      hold([userLock(appId, userId)]);
      return userId;
    },
  };
}
