import { SignJWT } from 'jose';
import type { TestServer } from './server.js';
import { USER_KIND, userKey, type UserRef, type UserView } from '../../src/features/users/directory.js';
import { startSession } from '../../src/features/sessions/sign-in.js';
import { userCreatedAt } from '../../src/auth/revocation.js';

/**
 * Ensures a user (by ID or address) in an app, starts it a session and issues it an access token
 * directly, for tests of `/me` routes that are not about how a user signs in.
 */
export async function tokenFor(
  server: TestServer,
  ref: UserRef,
  appId = server.app.id,
): Promise<{ userId: string; token: string; sessionId: string }> {
  const { users, runtime, accessTokens } = server.deps;
  const plan = users.planEnsure(appId, ref);
  // A session of its own, as a sign-in starts one: routes that check the session find it live.
  const { userId, sessionId } = await runtime.run(plan.locks, (turn) => {
    const { userId } = plan.apply(turn);
    const { sid } = startSession(server.deps, turn, turn.get(USER_KIND, userKey(appId, userId)) as UserView);
    return { userId, sessionId: sid };
  });
  const user = users.require(appId, userId);
  const { token } = await accessTokens.issue({
    appId,
    userId,
    sessionId,
    authLevel: user.context.auth_level,
    isVerifiedUser: user.context.auth_level === 'verified',
    userCreatedAt: userCreatedAt(user.context),
  });
  return { userId, token, sessionId };
}

/**
 * `token`'s claims as `edit` changes them, signed with the server's current key: a token the service
 * would accept as its own, as one an older build issued.
 */
export async function resignedAsServer(
  server: TestServer,
  token: string,
  edit: (claims: Record<string, unknown>) => Record<string, unknown>,
): Promise<string> {
  const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
  await server.deps.signingKeys.refresh();
  const key = server.deps.signingKeys.current();
  return new SignJWT(edit(claims)).setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: 'JWT' }).sign(key.privateKey);
}
