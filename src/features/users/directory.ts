import { notFound } from '../../lib/errors.js';
import { assertSessionHolds, userCreatedAt, type SessionOf } from '../../auth/revocation.js';
import { newId } from '../../lib/ids.js';
import { actorLockKey, type ActorRuntime, type ActorView, type Turn } from '../../runtime/runtime.js';
import { HIGH_KEY, type Database, type Key, type Store } from '../../storage/store.js';
import type { Attributes, ProfileData, UserContext, UserEvent } from '../../../machines/user.machine.js';
import { addressesOf, FIELD_OF, normalizeAddress, stillVerified, type AddressKind } from './addresses.js';
import type { ProfileViews } from './profile-views.js';
import { fieldSpec } from '../applications/schemas.js';
import type { ApplicationStore } from '../applications/store.js';
import { checkNewUserId } from './schemas.js';
import { CreationStamps } from './creation-stamps.js';

export const USER_KIND = 'user';
export const userKey = (appId: string, userId: string): Key[] => [appId, userId];
export const userLock = (appId: string, userId: string) => actorLockKey(USER_KIND, userKey(appId, userId));
/** Held while a turn may create a user with this address, so two turns never both create one. */
export const addressLock = (appId: string, kind: AddressKind, value: string) =>
  `address:${appId}:${kind}:${normalizeAddress(kind, value)}`;
export const userCountKey = (appId: string): Key => ['users', appId];
/** The database of the address index. */
export const USER_LOOKUP_DB = 'user_lookup';

export type UserView = ActorView<UserContext>;

/**
 * The instant a turn stamps on what it makes for a user (a link, an invite): its own, or the user's
 * creation when the clock reads earlier, stepped back since (NTP), which would make it read as made for
 * a user deleted before (redeemLink, verify's 'invited users').
 */
export function stampForUser(turn: Turn, appId: string, userId: string): number {
  const user = turn.get<UserContext>(USER_KIND, userKey(appId, userId));
  return Math.max(turn.now, user ? userCreatedAt(user.context) : 0);
}

/** How a caller names a user to find or create: its ID, or an address. */
export type UserRef = { user_id: string } | { email: string } | { phone: string };

/** A plan for "find this user, or create it": the locks to take, then `apply` inside the turn. */
export interface EnsurePlan {
  locks: string[];
  apply(turn: Turn, extraData?: ProfileData): { userId: string; created: boolean };
}

/**
 * Users of every application: reads from committed snapshots, writes as events through the user
 * machine, with the lookup index, the per-app count and the profile read model kept in step.
 */
export class UserDirectory {
  /** `[appId, kind, value, createdMs, userId]`: oldest first for each address. */
  private readonly lookup: Database<true, Key>;
  private readonly creationStamps = new CreationStamps();

  constructor(
    store: Store,
    private readonly runtime: ActorRuntime,
    private readonly views: ProfileViews,
    private readonly apps: ApplicationStore,
  ) {
    this.lookup = store.db<true>(USER_LOOKUP_DB);
  }

  get(appId: string, userId: string): UserView | undefined {
    return this.runtime.read<UserContext>(USER_KIND, userKey(appId, userId));
  }

  exists(appId: string, userId: string): boolean {
    return this.runtime.exists(USER_KIND, userKey(appId, userId));
  }

  require(appId: string, userId: string): UserView {
    const user = this.get(appId, userId);
    if (!user) throw notFound('user', userId);
    return user;
  }

  count(appId: string): number {
    return this.runtime.counter(userCountKey(appId));
  }

  /** IDs of the users with this address in `data` or `verified_data`, oldest first. */
  findByAddress(appId: string, kind: AddressKind, value: string): string[] {
    const normalized = normalizeAddress(kind, value);
    const keys = this.lookup.getKeys({
      start: [appId, kind, normalized, 0],
      end: [appId, kind, normalized, HIGH_KEY],
    });
    return [...keys].map((key) => (key as Key[])[4] as string);
  }

  /**
   * Moves each index entry whose address `normalizeAddress` now writes otherwise to the key it now
   * has (the format step to 9, which added NFC): the address is read from the key, no user is read.
   */
  renormalizeAddresses(): void {
    const moved = [...this.lookup.getKeys({}).filter((key) => {
      const [, kind, address] = key as [string, AddressKind, string];
      return normalizeAddress(kind, address) !== address;
    })];
    for (const key of moved) {
      const [appId, kind, address, createdMs, userId] = key as [string, AddressKind, string, number, string];
      this.lookup.remove(key);
      this.lookup.put([appId, kind, normalizeAddress(kind, address), createdMs, userId], true);
    }
  }

  create(turn: Turn, input: { appId: string; id: string; data: ProfileData; attributes: Attributes }): UserView {
    const data = { ...input.data, user_id: input.id };
    const at = this.creationStamps.stampFor(userLock(input.appId, input.id), turn.now);
    const user = turn.create<UserContext>(USER_KIND, userKey(input.appId, input.id), { ...input, data, at });
    this.reindex(turn, undefined, user);
    turn.count(userCountKey(input.appId), 1);
    return user;
  }

  /**
   * `requireUser`'s checks again, from what is committed, in a `/me` turn: the user may have been
   * deleted (and re-created under its ID), disabled or signed out while the request waited. A turn over
   * something else (a group) need not hold the user's lock: a sign-out committed meanwhile could as
   * well have come just after. 401 as from `requireUser`.
   */
  checkCaller(appId: string, caller: SessionOf): void {
    assertSessionHolds(this.views.signedInView(appId, caller.userId)?.access, caller.sessionId, caller.userCreatedAt);
  }

  /** The caller's user, for a `/me` turn that holds its lock (so what is committed is the user as it is): see `checkCaller`. */
  requireCaller(turn: Turn, appId: string, caller: SessionOf): UserView {
    this.checkCaller(appId, caller);
    return turn.get<UserContext>(USER_KIND, userKey(appId, caller.userId))!;
  }

  /** Sends one event to a user; indexes and views follow. 404 for an unknown user. */
  change(turn: Turn, appId: string, userId: string, event: UserEvent): UserView {
    const before = turn.get<UserContext>(USER_KIND, userKey(appId, userId));
    if (!before) throw notFound('user', userId);
    return this.send(turn, appId, userId, before, event);
  }

  /**
   * A profile write: `data` and `attributes` replace the user's, and an address it moves away is no
   * longer verified. `before` is the user as the turn has it, for a caller that has read it already.
   */
  update(
    turn: Turn,
    appId: string,
    userId: string,
    next: { data: ProfileData; attributes: Attributes },
    before = turn.get<UserContext>(USER_KIND, userKey(appId, userId)),
  ): UserView {
    if (!before) throw notFound('user', userId);
    const verified_data = stillVerified(before.context.data, next.data, before.context.verified_data);
    return this.send(turn, appId, userId, before, { type: 'user.update', data: next.data, attributes: next.attributes, verified_data, at: turn.now });
  }

  /** `event` to the user the turn has as `before`; its index entries follow. */
  private send(turn: Turn, appId: string, userId: string, before: UserView, event: UserEvent): UserView {
    // Snapshots are immutable: `before` still describes the user as it was after the send.
    const after = turn.send<UserContext>(USER_KIND, userKey(appId, userId), event);
    this.reindex(turn, before, after);
    return after;
  }

  remove(turn: Turn, appId: string, userId: string): void {
    const before = turn.get<UserContext>(USER_KIND, userKey(appId, userId));
    if (!before) throw notFound('user', userId);
    turn.remove(USER_KIND, userKey(appId, userId));
    this.creationStamps.deletedAt(userLock(appId, userId), userCreatedAt(before.context), turn.now);
    this.reindex(turn, before, undefined);
    turn.count(userCountKey(appId), -1);
  }

  /** The user's record lists its member in `groupId` as the turn's transaction has it (or no longer). */
  refreshGroup(turn: Turn, appId: string, userId: string, groupId: string): void {
    turn.derive(() => this.views.regroup(appId, userId, groupId));
  }

  /**
   * The user an address names when it signs in, or names a member or an invite: its oldest holder
   * that proved the address (it is in `verified_data`), that never signed in (its `data` is the app's
   * alone), or whose users may not write that field. A signed-in user may have written someone else's
   * address into its own profile: matching it would let the one who holds the address sign in to that
   * account, which its writer still holds too (a pre-hijacked account).
   */
  addressHolder(appId: string, kind: AddressKind, value: string): string | undefined {
    const holders = this.findByAddress(appId, kind, value);
    const field = FIELD_OF[kind];
    const app = this.apps.require(appId);
    const appWritesIt = fieldSpec(app.schema, field)?.user_writable !== true;
    // Users may have written it before a schema change took that right: those signed in by then must prove it.
    const closedAt = app.addresses_closed_at?.[field];
    if (appWritesIt && closedAt === undefined) return holders[0];
    const normalized = normalizeAddress(kind, value);
    return holders.find((userId) => {
      const user = this.get(appId, userId)?.context;
      if (user === undefined) return false;
      const verified = user.verified_data[field];
      const { first_sign_in } = user.meta;
      return (
        (verified !== undefined && normalizeAddress(kind, verified) === normalized) ||
        first_sign_in === undefined ||
        (appWritesIt && first_sign_in > closedAt!)
      );
    });
  }

  /**
   * Locks and steps to find a user by ID or address, creating it when absent (an unknown `user_id`
   * is created under that ID; an unknown address gets a new ID, drawn in the turn so that it sorts
   * after every user committed before it, and the address in `data`). `turn.holds` the user's lock then.
   */
  planEnsure(appId: string, ref: UserRef): EnsurePlan {
    if ('user_id' in ref) {
      return {
        locks: [userLock(appId, ref.user_id)],
        apply: (turn, extraData = {}) => {
          if (turn.get(USER_KIND, userKey(appId, ref.user_id))) return { userId: ref.user_id, created: false };
          checkNewUserId(ref.user_id, 'user_id');
          this.create(turn, { appId, id: ref.user_id, data: extraData, attributes: {} });
          return { userId: ref.user_id, created: true };
        },
      };
    }
    const [kind, value] = 'email' in ref ? (['email', ref.email] as const) : (['phone', ref.phone] as const);
    return {
      locks: [addressLock(appId, kind, value)],
      apply: (turn, extraData = {}) => {
        const existing = this.addressHolder(appId, kind, value);
        if (existing) return { userId: existing, created: false };
        const newUserId = turn.lockNew(() => newId('user'), (id) => [userLock(appId, id)]);
        const field = kind === 'email' ? 'email' : 'phone_number';
        this.create(turn, { appId, id: newUserId, data: { ...extraData, [field]: value.trim() }, attributes: {} });
        return { userId: newUserId, created: true };
      },
    };
  }

  private reindex(turn: Turn, before: UserView | undefined, after: UserView | undefined): void {
    // Most changes touch no address (a profile write sends them back as they were): no index work then.
    if (before && after && sameAddressSources(before.context, after.context)) return;
    const keyOf = (user: UserView, [kind, value]: [AddressKind, string]): Key => [
      user.context.appId,
      kind,
      value,
      Date.parse(user.context.meta.created),
      user.context.id,
    ];
    const old = new Map((before ? addressesOf(before.context.data, before.context.verified_data) : []).map((a) => [a.join(':'), a]));
    const next = new Map((after ? addressesOf(after.context.data, after.context.verified_data) : []).map((a) => [a.join(':'), a]));
    for (const [id, address] of old) if (!next.has(id)) turn.del(this.lookup, keyOf(before!, address));
    for (const [id, address] of next) if (!old.has(id)) turn.put(this.lookup, keyOf(after!, address), true);
  }
}

const ADDRESS_FIELDS = Object.values(FIELD_OF);

/**
 * Whether two states of one user index under the same keys: the fields `addressesOf` reads are the
 * same (the other parts of a key, the user's ID and creation time, never change).
 */
const sameAddressSources = (a: UserContext, b: UserContext): boolean =>
  ADDRESS_FIELDS.every((field) => a.data[field] === b.data[field] && a.verified_data[field] === b.verified_data[field]);
