import { linkExpired, notFound, unauthorized } from '../../lib/errors.js';
import { userCreatedAt } from '../../auth/revocation.js';
import { userLock } from '../users/directory.js';
import { FIELD_OF, holdsAddress } from '../users/addresses.js';
import { tokenPair, type TokenPair } from '../sessions/token-pair.js';
import { startSession } from '../sessions/sign-in.js';
import type { Deps } from '../../deps.js';
import type { VerifiedData } from '../../../machines/user.machine.js';
import type { LinkRecord } from './link-store.js';

const verifiedBy = (record: LinkRecord): VerifiedData | undefined =>
  record.address && { [FIELD_OF[record.address.kind]]: record.address.value };

/**
 * `GET /hub/auth/magic/{id}`: in one turn, spends the link, signs its user in (the address it was
 * sent to becomes verified), starts a session and lets the link's purpose handler do its part.
 * Errors change nothing: a disabled user's link stays pending.
 */
export async function redeemLink(deps: Deps, id: string): Promise<{ tokens: TokenPair; link: LinkRecord }> {
  const found = deps.magicLinks.find(id);
  if (!found) throw notFound('link');
  const { ref } = found;
  const { appId, userId, purpose } = found.record;
  const handler = deps.magicLinks.purposes.handlerOf(purpose.kind);
  const facts = { appId, userId, purpose };
  const locks = [userLock(appId, userId), ...(handler?.locks(facts) ?? [])];
  const { user, sid, refreshToken, link } = await deps.runtime.run(locks, (turn) => {
    const link = deps.magicLinks.current(ref);
    // Forgotten while this redemption waited: its user was deleted, as the next request would be told.
    if (!link) throw notFound('link');
    if (link.state !== 'pending') throw linkExpired('The link has already been used or was revoked');
    if (link.expiresAt <= turn.now) throw linkExpired('The link has expired');
    const current = deps.users.get(appId, userId);
    // A user ID reused after a deletion does not inherit the links of the deleted user.
    if (!current || link.createdAt < userCreatedAt(current.context)) {
      throw linkExpired('The user of this link no longer exists');
    }
    // The address moved on (to another user, say): whoever holds it now is not this user.
    if (link.foundByAddress && !holdsAddress(current.context, link.address!.kind, link.address!.value)) {
      throw linkExpired('The address this link was sent to is no longer its user\'s');
    }
    if (current.state === 'disabled') throw unauthorized('The user is disabled', 'E_USER_DISABLED');
    // A session ended by a sign-out or a reused refresh token must not live on through a link it asked for.
    if (link.sid !== undefined && !deps.sessions.isLive(appId, userId, link.sid, turn.now)) {
      throw linkExpired('The session that asked for this link has ended');
    }
    deps.magicLinks.spend(turn, ref, link);
    const user = deps.users.change(turn, appId, userId, {
      type: 'user.signIn',
      method: handler?.method ?? 'magic_link',
      verified: verifiedBy(link),
      at: turn.now,
    });
    const session = startSession(deps, turn, user);
    handler?.redeem(turn, facts);
    return { user, link, ...session };
  });
  return { tokens: await tokenPair(deps, user, sid, refreshToken), link };
}
