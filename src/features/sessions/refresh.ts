import { ApiError, unauthorized } from '../../lib/errors.js';
import { sessionMarksOf, sessionRevoked } from '../../auth/revocation.js';
import { userLock } from '../users/directory.js';
import type { Deps } from '../../deps.js';
import { endSession } from './sign-out.js';
import { tokenPair, type TokenPair } from './token-pair.js';

const invalidRefreshToken = () =>
  new ApiError(400, 'E_INVALID_REFRESH_TOKEN', 'The refresh token is not valid, has expired or was already used');

/**
 * `POST /hub/auth/token`: spends a refresh token for a new pair. A token used a second time means
 * it leaked (or its owner's copy did): the whole session is ended, so the thief's pair dies too.
 */
export async function refreshSession(deps: Deps, refreshToken: string): Promise<TokenPair> {
  const known = deps.sessions.lookup(refreshToken);
  if (!known) throw invalidRefreshToken();
  const { appId, userId } = known;
  const outcome = await deps.runtime.run([userLock(appId, userId)], (turn) => {
    const current = deps.users.get(appId, userId);
    if (!current || sessionRevoked(sessionMarksOf(current.context), known.sid)) return { kind: 'invalid' as const };
    const rotation = deps.sessions.rotate(turn, refreshToken);
    if (rotation.kind === 'reused') endSession(deps, turn, appId, userId, rotation.sid);
    if (rotation.kind !== 'rotated') return rotation;
    if (current.state === 'disabled') throw unauthorized('The user is disabled', 'E_USER_DISABLED');
    const user = deps.users.change(turn, appId, userId, { type: 'user.signIn', method: 'refresh_token', at: turn.now });
    return { ...rotation, user };
  });
  if (outcome.kind !== 'rotated') throw invalidRefreshToken();
  return tokenPair(deps, outcome.user, outcome.sid, outcome.refreshToken);
}
