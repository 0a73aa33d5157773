import { callerAppId } from '../../auth/platform-auth.js';
import { callerUser } from '../../auth/bearer-auth.js';
import { ApiError, tokenRefused, validationError } from '../../lib/errors.js';
import { parseJsonBody } from '../../lib/validate.js';
import { ok, redirect } from '../../http/reply.js';
import { asksFor } from '../../http/accept.js';
import type { Route } from '../../http/route.js';
import type { RequestContext } from '../../http/context.js';
import type { Deps } from '../../deps.js';
import type { AppSchema } from '../applications/schemas.js';
import type { ProfileData } from '../../../machines/user.machine.js';
import { userLock, type UserRef } from '../users/directory.js';
import { FIELD_OF } from '../users/addresses.js';
import { applyProfileChange } from '../users/profile-change.js';
import type { LinkPurpose } from './purposes.js';
import { redeemLink } from './redeem.js';
import { runHolding } from '../../runtime/holding.js';
import { MeMagicSchema, PlatformMagicSchema } from './schemas.js';

/**
 * 400 `E_VALIDATION` naming `data.<field>` unless `data` is a valid platform write of a profile by the
 * app's schema; answers that schema and the data such a write stores (a `null` names no value: it is
 * dropped, not stored). Not checked for required fields: a user made from an address holds what it
 * was given (docs/API.md).
 */
function checkProfileData(deps: Deps, appId: string, data: Record<string, unknown>): { schema: AppSchema; data: ProfileData } {
  const schema = deps.apps.require(appId).schema;
  const rules = {
    schema,
    writer: 'app' as const,
    mode: 'merge' as const,
    userId: '',
    reservedNamespace: deps.config.names.reservedNamespace,
  };
  try {
    return { schema, data: applyProfileChange({ data: {}, attributes: {} }, { data, files: {} }, rules).data };
  } catch (error) {
    if (!(error instanceof ApiError) || !error.fieldErrors) throw error;
    const named = Object.entries(error.fieldErrors).map(([name, messages]) => [`data.${name}`, messages]);
    throw validationError(Object.fromEntries(named));
  }
}

const wantsJson = (ctx: RequestContext) => asksFor(ctx.header('accept') ?? '', 'application/json');

export function magicLinkRoutes(deps: Deps): Route[] {
  const { runtime, users, magicLinks } = deps;

  /**
   * The platform request, checked whole: which address, that `data` holds it, and that `data` would
   * make a valid profile of the app (it shapes the user if one is created).
   */
  function parsePlatformRequest(ctx: RequestContext, appId: string) {
    const body = parseJsonBody(ctx, PlatformMagicSchema);
    const { verification_type: type, verification_mode: mode } = body;
    if (type && mode && type !== mode) {
      throw validationError({ verification_mode: ['must equal verification_type when both are given'] });
    }
    const kind = type ?? mode;
    if (!kind) throw validationError({ verification_type: ['is required (email or phone)'] });
    const field = FIELD_OF[kind];
    const address = body.data[field];
    if (typeof address !== 'string') {
      const problem = address === undefined ? `is required for verification_type ${kind}` : 'must be a string';
      throw validationError({ [`data.${field}`]: [problem] });
    }
    return { ...body, kind, address, checked: checkProfileData(deps, appId, body.data) };
  }

  return [
    {
      method: 'POST',
      path: '/hub/auth/magic',
      before: [deps.requireApp],
      async handle(ctx) {
        const appId = callerAppId(ctx.caller);
        const request = parsePlatformRequest(ctx, appId);
        const ref: UserRef = request.user_id
          ? { user_id: request.user_id }
          : request.kind === 'email'
            ? { email: request.address }
            : { phone: request.address };
        const purpose: LinkPurpose = request.group_to_join
          ? { kind: 'join_group', groupId: request.group_to_join }
          : { kind: 'sign_in' };
        const plan = users.planEnsure(appId, ref);
        // The user found by address is locked too (its links are revoked under its lock); a holder
        // that changes before the turn runs is locked in the next attempt, along with this one's.
        const found = 'user_id' in ref ? undefined : users.addressHolder(appId, request.kind, request.address);
        const locks = [...plan.locks, ...(found ? [userLock(appId, found)] : [])];
        const made = await runHolding(runtime, locks, (turn, hold) => {
          // Again by the schema as it is now if a change to it was committed while the turn waited for its locks.
          const { data } = deps.apps.require(appId).schema === request.checked.schema ? request.checked : checkProfileData(deps, appId, request.data);
          const { userId } = plan.apply(turn, data);
          hold([userLock(appId, userId)]);
          const { link } = magicLinks.create(turn, {
            appId,
            userId,
            expiresAt: turn.now + request.expiration,
            redirectUrl: request.redirect_url,
            address: { kind: request.kind, value: request.address },
            ...('user_id' in ref ? {} : { foundByAddress: true }),
            purpose,
          }, request.user_id ? 'user_id' : `data.${FIELD_OF[request.kind]}`);
          return { link, app_user_id: userId };
        }, 'The user changed while the link was made; try again');
        return ok(made);
      },
    },
    {
      method: 'POST',
      path: '/me/auth/magic',
      before: [deps.requireUser],
      async handle(ctx) {
        const caller = callerUser(ctx);
        const { appId, userId } = caller;
        const body = parseJsonBody(ctx, MeMagicSchema);
        const { link } = await runtime.run([userLock(appId, userId)], (turn) => {
          deps.users.requireCaller(turn, appId, caller);
          // An access token outlives a sign-out that ends its session's refresh; it must not start a new session.
          if (!deps.sessions.isLive(appId, userId, caller.sessionId, turn.now)) {
            throw tokenRefused('The session of this token has ended: sign in again to ask for a link', 'E_TOKEN_REVOKED');
          }
          return magicLinks.create(turn, {
            appId,
            userId,
            expiresAt: turn.now + body.expiration,
            redirectUrl: body.redirect_url,
            purpose: { kind: 'sign_in' },
            sid: caller.sessionId,
          });
        });
        return ok({ link, app_user_id: userId });
      },
    },
    {
      method: 'GET',
      path: '/hub/auth/magic/:id',
      // Mail scanners and trackers append parameters to links, and send HEAD to see where they lead.
      query: 'ignored',
      changesState: true,
      async handle(ctx) {
        const { tokens, link } = await redeemLink(deps, ctx.params.id);
        const { appId, userId, redirectUrl } = link;
        const target = redirectUrl === undefined ? undefined : magicLinks.destinationOf(appId, redirectUrl);
        if (!target || wantsJson(ctx)) {
          // A place the link may no longer send its browser to is not handed to the client to go to either.
          return ok({ ...tokens, app_user_id: userId, app_id: appId, redirect_url: target?.href ?? null });
        }
        const fragment = { ...tokens, expires_in: String(tokens.expires_in), app_user_id: userId, app_id: appId };
        target.hash = new URLSearchParams(fragment).toString();
        return redirect(target.toString());
      },
    },
  ];
}
