import { bearerRequired, forbidden, tokenRefused, unauthorized } from '../lib/errors.js';
import type { Step } from '../http/route.js';
import type { Caller, RequestContext } from '../http/context.js';
import type { Clock } from '../lib/clock.js';
import type { ProfileViews } from '../features/users/profile-views.js';
import type { AccessClaims, AccessTokens } from './access-tokens.js';
import { assertSessionHolds } from './revocation.js';

const BEARER = /^Bearer +([A-Za-z0-9._~+/=-]+)$/i;
/** How nearly every client writes the scheme; others take the pattern. */
const TYPICAL_PREFIX = 'Bearer ';

/**
 * The `/me` step (ADDENDUM §4): signature, `exp`, `iss` (cached once verified), then on every
 * request: the path's app among `aud` (403), the user exists and is enabled, its session is not
 * over (`sessionRevoked`).
 */
export function requireUser(tokens: AccessTokens, profiles: ProfileViews, clock: Clock): Step {
  const check = (ctx: RequestContext, claims: AccessClaims) => {
    if (claims.exp * 1000 <= clock.now()) throw tokenRefused('The access token has expired', 'E_TOKEN_EXPIRED');
    const appId = ctx.params.app ?? claims.appId;
    if (appId !== claims.appId && !claims.aud.includes(`app:${appId}`)) {
      throw forbidden('The access token is not for this application');
    }
    // Read from LMDB on every request, never cached: a sign-out or a disable counts on the very next one.
    const signedIn = profiles.signedInView(appId, claims.sub);
    assertSessionHolds(signedIn?.access, claims.sid, claims.userCreatedAt, claims.sessionStart);
    ctx.caller = {
      kind: 'user',
      appId,
      userId: claims.sub,
      sessionId: claims.sid,
      tokenId: claims.jti,
      expiresAt: claims.exp * 1000,
      userCreatedAt: signedIn!.access.createdAt,
      view: signedIn!.me,
    };
  };
  return (ctx) => {
    const authorization = ctx.header('authorization') ?? '';
    // A token verified before matched the pattern then: a warm one skips it (3.6% of a `/me` read).
    const warm = authorization.startsWith(TYPICAL_PREFIX) ? tokens.verifiedBefore(authorization.slice(TYPICAL_PREFIX.length)) : undefined;
    if (warm) return check(ctx, warm);
    const match = BEARER.exec(authorization);
    if (!match) throw bearerRequired('An Authorization: Bearer token is required');
    const claims = tokens.verify(match[1]);
    if (claims instanceof Promise) return claims.then((c) => check(ctx, c));
    check(ctx, claims);
  };
}

/** The signed-in user, for handlers behind `requireUser`. */
export function callerUser(ctx: RequestContext): Extract<Caller, { kind: 'user' }> {
  const caller = ctx.caller;
  if (!caller || caller.kind !== 'user') throw unauthorized();
  return caller;
}
