import type { Turn } from '../../runtime/runtime.js';
import type { Database, Key, Store } from '../../storage/store.js';
import type { MagicLinks } from '../magic-links/link-store.js';
import type { UserRef } from '../users/directory.js';
import { refField } from './user-target.js';
import type { InviteView } from './render.js';

/** How long an invite's link may be redeemed; afterwards the invited user can still accept on `/me`. */
export const INVITE_LINK_TTL_MS = 7 * 24 * 3600 * 1000;

const keyOf = ({ context: c }: InviteView): Key => [c.appId, c.group_id, c.id];

/**
 * The magic link of each invite: made in the turn that creates the invite, redeemed through the
 * `invite` purpose (sign in and accept, one commit), killed when the invite is answered on `/me` or
 * deleted. An entry lives only while its invite is pending: redeeming the link, which accepts the
 * invite, drops it too.
 * Table `invite_links` `[appId, groupId, inviteId] → ref` (the link's stored name, never the link).
 */
export class InviteLinks {
  private readonly refs: Database<string, Key>;

  constructor(
    store: Store,
    private readonly links: MagicLinks,
  ) {
    this.refs = store.db<string>('invite_links');
  }

  /**
   * Stages the link of a new invite; the turn must hold the invited user's lock. Answers the URL,
   * shown once; 400 on the body's user field when the user holds as many unused links as it may.
   */
  issue(turn: Turn, invite: InviteView, target: UserRef): string {
    const c = invite.context;
    const address =
      'email' in target ? { kind: 'email' as const, value: target.email } : 'phone' in target ? { kind: 'phone' as const, value: target.phone } : undefined;
    const { link, ref } = this.links.create(turn, {
      appId: c.appId,
      userId: c.ensured_user_id,
      expiresAt: turn.now + INVITE_LINK_TTL_MS,
      redirectUrl: c.redirect_url,
      ...(address && { address, foundByAddress: true }),
      purpose: { kind: 'invite', groupId: c.group_id, inviteId: c.id },
    }, refField(target));
    turn.put(this.refs, keyOf(invite), ref);
    return link;
  }

  /**
   * 400 on `redirect_url` unless the app's links may send their browser to `url`: an invite with a link
   * is held to that on update as on create.
   */
  requireRedirect(appId: string, url: string): void {
    this.links.requireRedirect(appId, url);
  }

  /** Points the invite's link, if still pending, at the invite's `redirect_url` (checked by `requireRedirect`). */
  retarget(turn: Turn, invite: InviteView): void {
    const ref = this.refs.get(keyOf(invite));
    if (ref !== undefined) this.links.redirect(turn, ref, invite.context.redirect_url);
  }

  /** Kills the invite's link if it is still pending. */
  kill(turn: Turn, invite: InviteView): void {
    const ref = this.refs.get(keyOf(invite));
    if (ref === undefined) return;
    this.links.revoke(turn, ref);
    this.forget(turn, invite);
  }

  /**
   * Drops the invite's entry, leaving the link alone: for the turn that redeems it, which has spent
   * it already.
   */
  forget(turn: Turn, invite: InviteView): void {
    turn.del(this.refs, keyOf(invite));
  }
}
