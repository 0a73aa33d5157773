import type { Deps } from '../../deps.js';
import type { UserView } from '../users/directory.js';
import { userCreatedAt } from '../../auth/revocation.js';

/** What every sign-in and refresh answers. */
export interface TokenPair {
  access_token: string;
  refresh_token: string;
  token_type: 'Bearer';
  /** Seconds until the access token expires. */
  expires_in: number;
}

/** Signs an access token for a session of `user` (after the turn that started or refreshed it). */
export async function tokenPair(
  deps: Pick<Deps, 'accessTokens' | 'config'>,
  user: UserView,
  sid: string,
  refreshToken: string,
): Promise<TokenPair> {
  const { token } = await deps.accessTokens.issue({
    appId: user.context.appId,
    userId: user.context.id,
    sessionId: sid,
    authLevel: user.context.auth_level,
    isVerifiedUser: user.context.auth_level === 'verified',
    userCreatedAt: userCreatedAt(user.context),
  });
  return {
    access_token: token,
    refresh_token: refreshToken,
    token_type: 'Bearer',
    expires_in: deps.config.accessTokenTtlSeconds,
  };
}
