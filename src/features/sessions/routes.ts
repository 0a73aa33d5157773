import { callerUser } from '../../auth/bearer-auth.js';
import { parseInput, parseJsonBody } from '../../lib/validate.js';
import type { RequestContext } from '../../http/context.js';
import { noContent, ok } from '../../http/reply.js';
import type { Route } from '../../http/route.js';
import type { Deps } from '../../deps.js';
import { existingUserId } from '../users/path-user.js';
import { refreshSession } from './refresh.js';
import { RefreshSchema, SignOutSchema } from './schemas.js';
import { signOut } from './sign-out.js';

/**
 * The refresh request. A form body is OAuth's (RFC 6749 §3.2): parameters the endpoint does not know
 * are ignored (OAuth clients send `scope`, AppAuth `redirect_uri` with every token request) and one
 * without a value counts as omitted. A JSON body is this service's own shape, as strict as any other.
 */
function refreshRequest(ctx: RequestContext) {
  const { body } = ctx;
  if (body.kind !== 'form') return parseJsonBody(ctx, RefreshSchema);
  const known = Object.entries(body.fields).filter(([name, value]) => value !== '' && Object.hasOwn(RefreshSchema.entries, name));
  return parseInput(RefreshSchema, Object.fromEntries(known));
}

/** Discovery (RFC 8414), the JWKS, refresh, and both sign-out routes. */
export function sessionRoutes(deps: Deps): Route[] {
  const base = deps.config.publicUrl;
  const discovery = {
    issuer: base,
    jwks_uri: `${base}/hub/auth/keys`,
    token_endpoint: `${base}/hub/auth/token`,
    grant_types_supported: ['refresh_token'],
    token_endpoint_auth_methods_supported: ['none'],
    response_types_supported: [],
  };
  // RFC 8414 §3: a client that knows only the issuer inserts the well-known string before its path.
  const wellKnown = `/.well-known/oauth-authorization-server${new URL(base).pathname.replace(/\/$/, '')}`;
  return [
    {
      method: 'GET',
      path: '/hub/auth/keys',
      // JWKS clients may add a cache-buster: ignored, as on the metadata.
      query: 'ignored',
      async handle() {
        await deps.signingKeys.refresh();
        return ok(deps.signingKeys.jwks());
      },
    },
    { method: 'GET', path: '/hub/auth/.well-known/oauth-authorization-server', query: 'ignored', handle: () => ok(discovery) },
    { method: 'GET', path: wellKnown, query: 'ignored', handle: () => ok(discovery) },
    {
      method: 'POST',
      path: '/hub/auth/token',
      // JSON, or the form body OAuth clients send to a token endpoint (RFC 6749 §6).
      body: ['json', 'form'],
      // Anyone may call it, and its body is a token of at most 512 characters and two short fields.
      maxBody: 16 * 1024,
      async handle(ctx) {
        const { refresh_token } = refreshRequest(ctx);
        return ok(await refreshSession(deps, refresh_token));
      },
    },
    {
      method: 'POST',
      path: '/applications/:app/users/:user/signout',
      before: [deps.requireApp],
      async handle(ctx) {
        const { sign_out_all } = parseJsonBody(ctx, SignOutSchema);
        await signOut(deps, ctx.params.app, existingUserId(ctx), { kind: sign_out_all ? 'everywhere' : 'refresh' });
        return noContent();
      },
    },
    {
      method: 'POST',
      path: '/me/applications/:app/signout',
      before: [deps.requireUser],
      async handle(ctx) {
        const { sign_out_all } = parseJsonBody(ctx, SignOutSchema);
        const caller = callerUser(ctx);
        const { appId, userId, sessionId } = caller;
        await signOut(deps, appId, userId, sign_out_all ? { kind: 'everywhere' } : { kind: 'session', sid: sessionId }, caller);
        return noContent();
      },
    },
  ];
}
