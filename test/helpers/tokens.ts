import type { TestServer } from './server.js';
import type { UserRef } from '../../src/features/users/directory.js';
import { newSessionId } from '../../src/auth/access-tokens.js';

/**
 * Ensures a user (by ID or address) in an app and issues it an access token directly, for tests of
 * `/me` routes that are not about how a user signs in.
 */
export async function tokenFor(
  server: TestServer,
  ref: UserRef,
  appId = server.app.id,
): Promise<{ userId: string; token: string; sessionId: string }> {
  const { users, runtime, accessTokens, clock } = server.deps;
  const plan = users.planEnsure(appId, ref);
  const { userId } = await runtime.run(plan.locks, (turn) => plan.apply(turn));
  const sessionId = newSessionId(clock.now());
  const user = users.require(appId, userId);
  const { token } = await accessTokens.issue({
    appId,
    userId,
    sessionId,
    authLevel: user.context.auth_level,
    isVerifiedUser: user.context.auth_level === 'verified',
  });
  return { userId, token, sessionId };
}
