import { randomToken } from '../../lib/ids.js';
import { limitReached, validationError } from '../../lib/errors.js';
import { isAbsoluteHttpUrl, isLocalPath, underBase, withoutUserinfo } from '../../lib/urls.js';
import { holdsMisleadingCharacter } from '../../lib/validate.js';
import type { RegisteredRedirects } from '../oidc-clients/registered-redirects.js';
import type { SessionStore } from '../sessions/session-store.js';
import { tokenKey } from '../../lib/secrets.js';
import type { Turn } from '../../runtime/runtime.js';
import { HIGH_KEY, type Database, type Key, type Store } from '../../storage/store.js';
import type { AddressKind } from '../users/addresses.js';
import { stampForUser } from '../users/directory.js';
import type { LinkPurpose, LinkPurposes } from './purposes.js';

/** A spent or expired link still answers 410 for this long after its expiry; then it is forgotten (404). */
export const SPENT_LINK_RETENTION_MS = 7 * 24 * 3600 * 1000;

/** How many unexpired, unspent links a user holds at most: a sign-out or a deletion goes through them all in one turn. */
export const PENDING_LINKS_PER_USER_LIMIT = 100;

export type LinkState = 'pending' | 'used' | 'revoked';

export interface LinkRecord {
  appId: string;
  userId: string;
  createdAt: number;
  expiresAt: number;
  redirectUrl?: string;
  /** The address the link was sent to: redeeming it proves control of it. */
  address?: { kind: AddressKind; value: string };
  /** The user was found by `address`, not named: the link signs it in only while it still holds it. */
  foundByAddress?: true;
  purpose: LinkPurpose;
  /** The session that asked for the link (`/me/auth/magic`): it is spent only while that session lives. */
  sid?: string;
  state: LinkState;
}

/** What a link's body may give as `redirect_url` (invites alone take a path), registered or not. */
const isRedirectShape = (url: string): boolean =>
  (isLocalPath(url) || isAbsoluteHttpUrl(url)) && withoutUserinfo(url) && !holdsMisleadingCharacter(url);

/** What a link's creator says; the store stamps the rest. */
export type NewLink = Omit<LinkRecord, 'createdAt' | 'state'>;

/**
 * Magic links: `<public url>/hub/auth/magic/<id>`, the id 256 random bits, stored only as its HMAC.
 * A link is single use; spending or revoking it keeps a tombstone so a second try answers 410.
 *
 * Tables: `magic_links` [hash] → LinkRecord; `user_magic_links` [appId, userId, expiresAt, hash],
 * so a user's live links are one key range and its long-dead ones a range prefix.
 *
 * For other features (group invites): `create(turn, …)` inside the turn that creates the invite,
 * holding the user's lock (`userLock`), keeps the returned `ref` to `revoke(turn, ref)` later; the
 * invite is accepted on redemption by the `invite` handler registered in `LinkPurposes`.
 */
export class MagicLinks {
  private readonly links: Database<LinkRecord, Key>;
  private readonly byUser: Database<true, Key>;

  constructor(
    store: Store,
    private readonly pepper: Buffer,
    private readonly publicUrl: string,
    private readonly redirects: RegisteredRedirects,
    private readonly sessions: Pick<SessionStore, 'isLive'>,
    readonly purposes: LinkPurposes,
  ) {
    this.links = store.db<LinkRecord>('magic_links');
    this.byUser = store.db<true>('user_magic_links');
  }

  /**
   * Stages a new link in `turn` (which must hold the user's lock) and answers its URL, shown once,
   * and `ref`, the stored name by which its creator may revoke it. 400 `E_VALIDATION` (on `userField`,
   * the body field that named the user, if any) when the user holds PENDING_LINKS_PER_USER_LIMIT
   * usable links already.
   */
  create(turn: Turn, request: NewLink, userField?: string): { link: string; ref: string } {
    const { purpose, redirectUrl } = request;
    if (redirectUrl !== undefined) this.requireRedirect(request.appId, redirectUrl);
    this.purposes.handlerOf(purpose.kind)?.check(turn, { appId: request.appId, userId: request.userId, purpose });
    this.pruneSpent(turn, request.appId, request.userId);
    if (this.usableCount(turn, request.appId, request.userId) >= PENDING_LINKS_PER_USER_LIMIT) {
      throw limitReached(
        `the user holds ${PENDING_LINKS_PER_USER_LIMIT} unused links: let one be used or expire, or sign the user out, before making another`,
        userField,
      );
    }
    const id = randomToken();
    const ref = tokenKey(this.pepper, id);
    const createdAt = stampForUser(turn, request.appId, request.userId);
    const record: LinkRecord = { ...request, createdAt, state: 'pending' };
    turn.put(this.links, ref, record);
    turn.put(this.byUser, [request.appId, request.userId, request.expiresAt, ref], true);
    return { link: `${this.publicUrl}/hub/auth/magic/${id}`, ref };
  }

  /**
   * Where a redeemed link of `appId` sends its browser: `url` made absolute (a path under the public
   * URL), if it is of the shape a link's body must give (an absolute http(s) URL or a path, no user name
   * or password, no misleading character) and registered; else undefined. Asked again on redemption,
   * so a place the app has since unregistered, or a link (or client) stored before these rules, is
   * answered in JSON, never followed.
   */
  destinationOf(appId: string, url: string): URL | undefined {
    if (!isRedirectShape(url) || !this.isRegistered(appId, url)) return undefined;
    return isLocalPath(url) ? underBase(this.publicUrl, url) : new URL(url);
  }

  /**
   * 400 `E_VALIDATION` on `redirect_url` unless a link of `appId` may be made with `url`. Its shape is the
   * body schema's to check, before, each problem in words of its own; a URL no schema checked is
   * registered nowhere, so it is refused all the same, its shape named once it is found unregistered.
   */
  requireRedirect(appId: string, url: string): void {
    if (this.isRegistered(appId, url)) return;
    throw validationError({
      redirect_url: [
        isRedirectShape(url)
          ? "must be one of the redirect_uris of the application's OIDC clients, or a URL on one of their allowed_origins"
          : 'must be an absolute http(s) URL, or a path starting with one / with no . or .. segment, as written, with no user name, password, control character, bidirectional control or line separator',
      ],
    });
  }

  /** A path on this service (invites only), or a place one of the app's OIDC clients registered. */
  private isRegistered(appId: string, url: string): boolean {
    return isLocalPath(url) || this.redirects.includes(appId, url);
  }

  /** The committed record of a link id, with its ref. */
  find(id: string): { ref: string; record: LinkRecord } | undefined {
    const ref = tokenKey(this.pepper, id);
    const record = this.links.get(ref);
    return record ? { ref, record } : undefined;
  }

  /** Re-reads a link inside a turn that holds its user's lock. */
  current(ref: string): LinkRecord | undefined {
    return this.links.get(ref);
  }

  spend(turn: Turn, ref: string, record: LinkRecord): void {
    turn.put(this.links, ref, { ...record, state: 'used' } satisfies LinkRecord);
  }

  /** Kills one pending link (a deleted invite's). */
  revoke(turn: Turn, ref: string): void {
    this.changePending(turn, ref, (record) => ({ ...record, state: 'revoked' }));
  }

  /** Points one pending link (an updated invite's) at `redirectUrl`, checked by the caller; none: no place. */
  redirect(turn: Turn, ref: string, redirectUrl: string | undefined): void {
    this.changePending(turn, ref, ({ redirectUrl: _, ...record }) => (redirectUrl === undefined ? record : { ...record, redirectUrl }));
  }

  /**
   * Read in the write transaction: a group turn changes an invite's link without its user's lock, and
   * a turn of the user may forget or spend it meanwhile.
   */
  private changePending(turn: Turn, ref: string, change: (record: LinkRecord) => LinkRecord): void {
    turn.derive(() => {
      const record = this.links.get(ref);
      if (record?.state === 'pending') this.links.put(ref, change(record));
    });
  }

  /** Kills every pending, unexpired link of a user (sign-out). */
  revokeAll(turn: Turn, appId: string, userId: string): void {
    for (const key of this.fromNowOn(turn, appId, userId)) {
      this.revoke(turn, (key as Key[])[3] as string);
    }
  }

  /** Forgets every link of a deleted user: a link's record names the address it was sent to. */
  forgetAll(turn: Turn, appId: string, userId: string): void {
    this.forgetExpiringBefore(turn, appId, userId, HIGH_KEY);
  }

  /**
   * The user's links that could still be redeemed, counted no further than the limit: pending,
   * unexpired, and not asked for by a session that has ended since (those answer 410 forever).
   * Read from the user's own index range; the user's lock keeps another turn from adding to it.
   */
  private usableCount(turn: Turn, appId: string, userId: string): number {
    let count = 0;
    for (const key of this.fromNowOn(turn, appId, userId)) {
      const [, , expiresAt, ref] = key as Key[];
      if ((expiresAt as number) <= turn.now) continue;
      const record = this.links.get(ref as string);
      if (record?.state !== 'pending') continue;
      if (record.sid !== undefined && !this.sessions.isLive(appId, userId, record.sid, turn.now)) continue;
      if (++count >= PENDING_LINKS_PER_USER_LIMIT) break;
    }
    return count;
  }

  /** Index keys of the user's links expiring from now on, soonest first. */
  private fromNowOn(turn: Turn, appId: string, userId: string) {
    return this.byUser.getKeys({ start: [appId, userId, turn.now], end: [appId, userId, HIGH_KEY] });
  }

  private pruneSpent(turn: Turn, appId: string, userId: string): void {
    this.forgetExpiringBefore(turn, appId, userId, turn.now - SPENT_LINK_RETENTION_MS);
  }

  private forgetExpiringBefore(turn: Turn, appId: string, userId: string, end: number | typeof HIGH_KEY): void {
    for (const key of this.byUser.getKeys({ start: [appId, userId, 0], end: [appId, userId, end] })) {
      turn.del(this.byUser, key as Key[]);
      turn.del(this.links, (key as Key[])[3]);
    }
  }
}
