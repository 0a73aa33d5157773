import type { AnyMachineSnapshot } from 'xstate';
import type { Config } from '../../config.js';
import type { ActorView, SnapshotStore } from '../../runtime/runtime.js';
import type { Database, Key, Store } from '../../storage/store.js';
import { HIGH_KEY } from '../../storage/store.js';
import { pageEntries, type PageRequest } from '../../storage/paging.js';
import { schemaStampOf, type ApplicationStore } from '../applications/store.js';
import { fieldSpec, type AppSchema } from '../applications/schemas.js';
import { persistedUser, type UserContext } from '../../../machines/user.machine.js';
import { sessionMarksOf } from '../../auth/revocation.js';
import { FIELD_OF, type AddressKind } from './addresses.js';
import {
  accessPart,
  cardPart,
  copyOf,
  encodeGroupEntries,
  encodeUserView,
  groupsList,
  groupsPart,
  meBody,
  meView,
  memberCardOf,
  platformBody,
  storedBody,
  withGroupEntry,
  withOpening,
  type GroupBytes,
  type GroupEntry,
  type MeView,
  type RenderedUser,
  type UserAccess,
} from './view-record.js';

/** A member as its user's profile lists it (without `profile`); the groups feature keeps these current. */
export type MemberEntry = Record<string, unknown>;

/** What a member's `profile` shows of its user: the user's ID, then what its member card holds. */
export interface MemberProfile {
  user_id: string;
  email?: unknown;
  first_name?: unknown;
  last_name?: unknown;
}

/** Who is shown a member's `profile`: the application, or a signed-in user (`/me`). */
export type ProfileReader = 'app' | 'user';

/**
 * Where a record's rewrite takes the user's memberships from (see `ProfileViews.rewrite`): the
 * record it replaces, or the memberships table.
 */
export type GroupsSource = 'record' | 'memberships';

type UserView = ActorView<UserContext>;

/** JSON text of a value; `null` for what JSON has no text for, so a body is always valid JSON. */
const json = (value: unknown): string => JSON.stringify(value) ?? 'null';

/** The database of user view records. */
export const USER_VIEWS_DB = 'user_views';

/**
 * The user machine version whose state a view record holds. Records do not carry it: a new version of
 * the user machine needs a format step that rewrites every record, and this constant moves with it
 * (`user-records.test.ts` fails while the two differ).
 */
export const USER_RECORD_MACHINE_VERSION = 1;

/**
 * The read model of profiles: each user's response bodies, serialized once per change and served
 * as bytes. A body's `groups` pairs are filled in as it is read: each group is rendered once, in
 * `groupViews`, so a change to a group rewrites one record whatever its size, and a user's record
 * names its groups with its own member in each. The record is also where the user actor's state is
 * kept (`snapshotStore`): a profile change stores one value. `rewrite` and `regroup` must run
 * inside the write transaction that changed the user or one of its members.
 */
export class ProfileViews {
  /** `[appId, userId, groupId]` → the user's member there, rendered (the groups feature writes them). */
  readonly memberships: Database<MemberEntry, Key>;
  /** `[appId, groupId]` → the group rendered as JSON bytes (the groups feature writes them). */
  readonly groupViews: Database<Buffer, Key>;
  /** `[appId, userId]` → the user's view record (view-record.ts), stored as raw bytes. */
  readonly records: Database<Buffer, Key>;
  /** `records` read without a copy of each value: for pages, each record used up before the next is read. */
  private readonly recordViews: Database<Buffer, Key>;
  /** How every body opens: the key of the user's ID, named after the brand. */
  private readonly opening: string;
  private readonly openingBytes: Buffer;

  constructor(
    store: Store,
    private readonly apps: ApplicationStore,
    config: Config,
  ) {
    this.records = store.db<Buffer>(USER_VIEWS_DB, { encoding: 'binary' });
    this.recordViews = store.db<Buffer>(USER_VIEWS_DB, { encoding: 'views' });
    this.memberships = store.db<MemberEntry>('user_groups');
    this.groupViews = store.db<Buffer>('group_views', { encoding: 'binary' });
    this.opening = `{${json(config.names.userField)}:`;
    this.openingBytes = Buffer.from(this.opening);
  }

  /** The user's memberships as its record lists them, from the memberships table. */
  groupEntries(appId: string, userId: string): GroupEntry[] {
    return [
      ...this.memberships
        .getRange({ start: [appId, userId, ''], end: [appId, userId, HIGH_KEY] })
        .map(({ key, value }) => ({ groupId: (key as Key[])[2] as string, member: JSON.stringify(value) })),
    ];
  }

  /** JSON text of the user's `{group, member}` pairs, as its bodies list them. */
  groupsJson(appId: string, userId: string): string {
    return groupsList(this.groupEntries(appId, userId), this.groupBytesOf(appId)).toString('utf8');
  }

  /** The committed rendering of a group as JSON bytes (a copy). */
  groupRendering(appId: string, groupId: string): Buffer | undefined {
    // Copied out of lmdb-js's reused buffer into Node's pool: `getBinary`'s copy, an ArrayBuffer of its
    // own, took 6 times as long (3.3 µs against 0.5 per rendering, docs/PERFORMANCE.md, round 23).
    const bytes = this.groupViews.getBinaryFast([appId, groupId]);
    return bytes && copyOf(bytes);
  }

  /**
   * The platform and `/me` bodies of a profile as JSON text cut where `groups` goes, and its member
   * card; the bodies differ only in `data`, so the other members are serialized once.
   */
  renderBodies(user: UserView, schema: AppSchema): RenderedUser {
    const c = user.context;
    const head = `${this.opening}${json(c.id)},"state":${json(user.state)},"auth_level":${json(c.auth_level)},"attributes":${json(c.attributes)},"data":`;
    const dataOf = (data: string, verified: string) => `${data},"verified_data":${verified},"groups":`;
    return {
      platformHead: head + dataOf(json(c.data), json(c.verified_data)),
      // `verified_data` holds the fields `email` and `phone_number`: on `/me`, under their rights too.
      meHead: head + dataOf(json(userReadableData(c.data, schema)), json(userReadableData(c.verified_data, schema))),
      tail: `,"meta":${json(c.meta)},"connection_map":{}}`,
      card: memberCardOf(c.data),
    };
  }

  /**
   * The user a view record holds, read back from its platform body and its access marks: the
   * inverse of `renderBodies` and `encodeUserView`, so the record can be the user's stored state.
   */
  storedUser(appId: string, userId: string): UserView | undefined {
    const record = this.recordOf([appId, userId]);
    return record && this.userIn(appId, userId, record);
  }

  private userIn(appId: string, userId: string, record: Buffer): UserView {
    const body = JSON.parse(storedBody(record));
    const { state, revokedBefore, revokedSessions } = accessPart(record);
    const { data, verified_data, attributes, auth_level, meta } = body;
    return {
      state,
      context: { appId, id: userId, data, verified_data, attributes, auth_level, meta, revokedBefore, revokedSessions },
    };
  }

  /** The user kind's snapshots, kept in the view records: what the actor runtime reads and stores users through. */
  snapshotStore(): SnapshotStore {
    return {
      get: (key) => {
        const record = this.recordOf(key);
        if (!record) return undefined;
        const user = this.userIn(key[0] as string, key[1] as string, record);
        return { v: USER_RECORD_MACHINE_VERSION, snapshot: persistedUser(user.state, user.context), bytes: record.length };
      },
      doesExist: (key) => this.records.doesExist(key),
      put: ([appId, userId], snapshot: AnyMachineSnapshot) =>
        this.rewrite(appId as string, userId as string, { state: snapshot.value as string, context: snapshot.context }, 'record'),
      remove: (key) => this.records.remove(key),
    };
  }

  /**
   * Renders the user's view record again from `user`. `groups: 'record'` carries over the
   * memberships of the record it replaces: exact, because every member change updates its user's
   * record (`regroup`) in the transaction that stores the member's entry, and writes inside the
   * write transaction run one after another, each reading what the ones before it wrote (a turn
   * that holds only a group's lock still serializes with the user's own turns there).
   * Answers the record's size in bytes.
   */
  rewrite(appId: string, userId: string, user: UserView, groups: GroupsSource): number {
    const app = this.apps.require(appId);
    // Every part named, no object spread: the spreads' copies missed V8's property caches on every write (docs/PERFORMANCE.md, round 20).
    const { platformHead, meHead, tail, card } = this.renderBodies(user, app.schema);
    const { createdAt, revokedBefore, revokedSessions } = sessionMarksOf(user.context);
    const record = encodeUserView({
      platformHead,
      meHead,
      tail,
      card,
      schemaStamp: schemaStampOf(app),
      access: { state: user.state, createdAt, revokedBefore, revokedSessions },
      groups: this.groupsFor(appId, userId, groups),
    });
    this.records.put([appId, userId], record);
    return record.length;
  }

  /** The user's record with its entry of `groupId` read again from the memberships table (or dropped); nothing for a user without one. */
  regroup(appId: string, userId: string, groupId: string): void {
    const key = [appId, userId];
    const member = this.memberships.get([appId, userId, groupId]);
    // LMDB's reused buffer, read after the memberships read and copied into the new record at once.
    const record = this.recordOf(key);
    if (!record) return;
    this.records.put(key, withGroupEntry(record, groupId, member && JSON.stringify(member)));
  }

  private groupsFor(appId: string, userId: string, source: GroupsSource): Buffer {
    const current = source === 'record' ? this.recordOf([appId, userId]) : undefined;
    return current ? groupsPart(current) : encodeGroupEntries(this.groupEntries(appId, userId));
  }

  /**
   * What a member's `profile` shows of the user to `reader`, or undefined for an unknown user: from
   * the record's member card, so answering a page of members parses a few small values per member,
   * not each user's whole body as `storedUser` does. The record is committed state, as every read
   * here. A user (on `/me`) is shown only the fields a user may read, as in every `/me` answer.
   */
  memberProfile(appId: string, userId: string, reader: ProfileReader): MemberProfile | undefined {
    const card = this.storedCard(appId, userId);
    if (card === undefined) return undefined;
    const fields = JSON.parse(card) as Omit<MemberProfile, 'user_id'>;
    return { user_id: userId, ...(reader === 'user' ? userReadableData(fields, this.apps.require(appId).schema) : fields) };
  }

  /** The member card the user's record holds, as text (`verify` also compares it with the user's `data`). */
  storedCard(appId: string, userId: string): string | undefined {
    const record = this.recordOf([appId, userId]);
    return record && cardPart(record);
  }

  /** Prepared bytes of the platform profile, or undefined for an unknown user. */
  platformBytes(appId: string, userId: string): Uint8Array | undefined {
    const record = this.recordOf([appId, userId]);
    return record && withOpening(platformBody(record, this.groupBytesOf(appId)), this.openingBytes);
  }

  /** What a signed-in user's request needs, from one read: its access marks and its `/me` body. */
  signedInView(appId: string, userId: string): { access: UserAccess; me: MeView } | undefined {
    const record = this.recordOf([appId, userId]);
    if (!record) return undefined;
    return { access: accessPart(record), me: meView(record) };
  }

  /** The groups part of the stored record (the memberships the next profile change will list). */
  storedGroups(appId: string, userId: string): Buffer | undefined {
    const record = this.recordOf([appId, userId]);
    return record && groupsPart(record);
  }

  /** Prepared platform bytes of one page of an app's profiles, in user ID order, read as they are taken. */
  *platformPage(appId: string, request: Omit<PageRequest, 'prefix'>): Generator<Uint8Array> {
    // Users of a page often share their groups: each group's rendering is read once for the page.
    const groupBytes = readOnce(this.groupBytesOf(appId));
    // `platformBody` copies the record before it reads any group rendering (which would overwrite the view).
    for (const { value } of pageEntries(this.recordViews, { ...request, prefix: [appId] })) yield withOpening(platformBody(value, groupBytes), this.openingBytes);
  }

  /** Prepared bytes of the user's own view, re-rendered when the schema changed since; from `view` when given. */
  meBytes(appId: string, userId: string, view = this.meViewOf(appId, userId)): Buffer | undefined {
    if (!view) return undefined;
    const app = this.apps.require(appId);
    if (view.schemaStamp === schemaStampOf(app)) return withOpening(meBody(view, this.groupBytesOf(appId)), this.openingBytes);
    const user = this.storedUser(appId, userId);
    if (!user) return undefined;
    const { meHead, tail } = this.renderBodies(user, app.schema);
    return Buffer.from(meHead + this.groupsJson(appId, userId) + tail);
  }

  private meViewOf(appId: string, userId: string): MeView | undefined {
    const record = this.recordOf([appId, userId]);
    return record && meView(record);
  }

  /**
   * A user's record. lmdb-js answers a value of 16 MiB or more as a plain Uint8Array over the map,
   * which the record's readers (Buffer methods) cannot take; profiles are capped well below that, and
   * a user's groups part is not.
   */
  recordOf(key: Key): Buffer | undefined {
    // lmdb-js's types promise a Buffer.
    const bytes: Uint8Array | undefined = this.records.getBinaryFast(key);
    return bytes === undefined || Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  private groupBytesOf(appId: string): GroupBytes {
    return (groupId) => this.groupRendering(appId, groupId);
  }
}

/** `groupBytes` answering each group from its first read (for one synchronous read of many bodies). */
function readOnce(groupBytes: GroupBytes): GroupBytes {
  const read = new Map<string, Uint8Array | undefined>();
  return (groupId) => {
    if (!read.has(groupId)) read.set(groupId, groupBytes(groupId));
    return read.get(groupId);
  };
}

/** Whether a user may read addresses of `kind`: the app's schema makes their field `user_readable`. */
export const userReadsAddress = (schema: AppSchema, kind: AddressKind): boolean => fieldSpec(schema, FIELD_OF[kind])?.user_readable === true;

/** `data` (or `verified_data`) as its user may see it: only `user_readable` fields (unknown fields are platform-only). */
export function userReadableData<T extends object>(data: T, schema: AppSchema): Partial<T> {
  const out: Partial<T> = {};
  for (const name in data) if (fieldSpec(schema, name)?.user_readable) out[name] = data[name];
  return out;
}
