import type { Config } from '../../config.js';
import type { ActorRuntime, ActorView } from '../../runtime/runtime.js';
import type { Database, Key, Store } from '../../storage/store.js';
import { HIGH_KEY } from '../../storage/store.js';
import { readPage, type PageRequest } from '../../storage/paging.js';
import type { ApplicationStore } from '../applications/store.js';
import { IMPLICIT_FIELDS, type AppSchema, type FieldSpec } from '../applications/schemas.js';
import type { UserContext } from '../../../machines/user.machine.js';
import { sessionMarksOf } from '../../auth/revocation.js';
import { accessPart, encodeUserView, groupsPart, mePart, platformPart, type MeView, type UserAccess } from './view-record.js';

/** A `{group, member}` pair as a profile lists it; the groups feature keeps these current. */
export interface GroupMembershipEntry {
  group: Record<string, unknown>;
  member: Record<string, unknown>;
}

/** Where a view rewrite takes the user's `{group, member}` pairs from (see `ProfileViews.rewrite`). */
export type GroupsSource = 'record' | 'memberships';

/** JSON text of a value; `null` for what JSON has no text for, so a body is always valid JSON. */
const json = (value: unknown): string => JSON.stringify(value) ?? 'null';

/** The database of user view records. */
const USER_VIEWS_DB = 'user_views';

/**
 * The read model of profiles: each user's response bodies, serialized once per change and served
 * as bytes. `rewrite` must run inside the write transaction that changed the user or a membership.
 */
export class ProfileViews {
  readonly memberships: Database<GroupMembershipEntry, Key>;
  /** `[appId, userId]` → the user's view record (view-record.ts), stored as raw bytes. */
  readonly records: Database<Buffer, Key>;

  constructor(
    store: Store,
    private readonly runtime: ActorRuntime,
    private readonly apps: ApplicationStore,
    private readonly config: Config,
  ) {
    this.records = store.db<Buffer>(USER_VIEWS_DB, { encoding: 'binary' });
    this.memberships = store.db<GroupMembershipEntry>('user_groups');
  }

  groupsOf(appId: string, userId: string): GroupMembershipEntry[] {
    return [
      ...this.memberships
        .getRange({ start: [appId, userId, ''], end: [appId, userId, HIGH_KEY] })
        .map(({ value }) => value),
    ];
  }

  /**
   * The platform and `/me` bodies of a profile as JSON text; they differ only in `data`, so the
   * other members are serialized once. `groups` is the JSON text of the user's pairs.
   */
  renderBodies(user: ActorView<UserContext>, groups: string, schema: AppSchema): { platform: string; me: string } {
    const c = user.context;
    const head = `{${json(this.config.names.userField)}:${json(c.id)},"state":${json(user.state)},"auth_level":${json(c.auth_level)},"attributes":${json(c.attributes)},"data":`;
    const tail = `,"verified_data":${json(c.verified_data)},"groups":${groups},"meta":${json(c.meta)},"connection_map":{}}`;
    return { platform: head + json(c.data) + tail, me: head + json(userReadableData(c.data, schema)) + tail };
  }

  /** JSON text of the user's `{group, member}` pairs as the memberships table holds them. */
  groupsJson(appId: string, userId: string): string {
    return JSON.stringify(this.groupsOf(appId, userId));
  }

  /**
   * Renders the user's view record again; `user` is the turn's view of it when the caller has one
   * (otherwise it is read back from the write transaction). `groups: 'record'` takes the pairs from
   * the record being replaced: right for a turn that changed none of the user's memberships, since
   * every membership change rewrites the record in its own transaction.
   */
  rewrite(
    appId: string,
    userId: string,
    user = this.runtime.read<UserContext>('user', [appId, userId]),
    groups: GroupsSource = 'memberships',
  ): void {
    const key = [appId, userId];
    if (!user) {
      this.records.remove(key);
      return;
    }
    const app = this.apps.require(appId);
    const current = groups === 'record' ? this.records.getBinaryFast(key) : undefined;
    const groupsJson = current ? groupsPart(current) : this.groupsJson(appId, userId);
    const { platform, me } = this.renderBodies(user, groupsJson, app.schema);
    const record = encodeUserView({
      platform,
      me,
      schemaStamp: app.updated_at,
      access: { state: user.state, ...sessionMarksOf(user.context) },
      groups: groupsJson,
    });
    this.records.put(key, record);
  }

  /** Prepared bytes of the platform profile, or undefined for an unknown user. */
  platformBytes(appId: string, userId: string): Uint8Array | undefined {
    const record = this.records.getBinaryFast([appId, userId]);
    return record && platformPart(record);
  }

  /** What a signed-in user's request needs, from one read: its access marks and its `/me` body. */
  signedInView(appId: string, userId: string): { access: UserAccess; me: MeView } | undefined {
    const record = this.records.getBinaryFast([appId, userId]);
    return record && { access: accessPart(record), me: mePart(record) };
  }

  /** The groups part of the stored record (what the next profile change will list). */
  storedGroupsJson(appId: string, userId: string): string | undefined {
    const record = this.records.getBinaryFast([appId, userId]);
    return record && groupsPart(record);
  }

  private meView(appId: string, userId: string): MeView | undefined {
    const record = this.records.getBinaryFast([appId, userId]);
    return record && mePart(record);
  }

  /** Prepared platform bytes of one page of an app's profiles, in user ID order. */
  platformPage(appId: string, request: Omit<PageRequest, 'prefix'>): Uint8Array[] {
    return readPage(this.records, { ...request, prefix: [appId] }).map(({ value }) => platformPart(value));
  }

  /** Prepared bytes of the user's own view, re-rendered when the schema changed since; from `view` when given. */
  meBytes(appId: string, userId: string, view = this.meView(appId, userId)): Buffer | undefined {
    if (!view) return undefined;
    const app = this.apps.require(appId);
    if (view.schemaStamp === app.updated_at) return view.me;
    const user = this.runtime.read<UserContext>('user', [appId, userId]);
    return user && Buffer.from(this.renderBodies(user, this.groupsJson(appId, userId), app.schema).me);
  }
}

/** The schema field rules for one field name, implicit fields included; undefined for unknown fields. */
export function fieldSpec(schema: AppSchema, name: string): FieldSpec | undefined {
  // Own properties only: a field named `constructor` must not find Object.prototype's.
  if (Object.hasOwn(schema.fields, name)) return schema.fields[name];
  return Object.hasOwn(IMPLICIT_FIELDS, name) ? IMPLICIT_FIELDS[name] : undefined;
}

/** `data` as its user may see it: only `user_readable` fields (unknown fields are platform-only). */
export function userReadableData(data: Record<string, unknown>, schema: AppSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name in data) if (fieldSpec(schema, name)?.user_readable) out[name] = data[name];
  return out;
}
