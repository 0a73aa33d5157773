import type { Config } from '../../config.js';
import type { ActorRuntime, ActorView } from '../../runtime/runtime.js';
import type { Database, Key, Store } from '../../storage/store.js';
import { HIGH_KEY } from '../../storage/store.js';
import { readPage, type PageRequest } from '../../storage/paging.js';
import type { ApplicationStore } from '../applications/store.js';
import { IMPLICIT_FIELDS, type AppSchema, type FieldSpec } from '../applications/schemas.js';
import type { UserContext } from '../../../machines/user.machine.js';
import { sessionMarksOf } from '../../auth/revocation.js';
import { accessPart, encodeUserView, mePart, platformPart, type MeView, type UserAccess } from './view-record.js';

/** A `{group, member}` pair as a profile lists it; the groups feature keeps these current. */
export interface GroupMembershipEntry {
  group: Record<string, unknown>;
  member: Record<string, unknown>;
}

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

  /** The full profile object as platform endpoints answer it. */
  render(user: ActorView<UserContext>, groups: GroupMembershipEntry[], schema?: AppSchema): Record<string, unknown> {
    const c = user.context;
    return {
      [this.config.names.userField]: c.id,
      state: user.state,
      auth_level: c.auth_level,
      attributes: c.attributes,
      data: schema ? userReadableData(c.data, schema) : c.data,
      verified_data: c.verified_data,
      groups,
      meta: c.meta,
      connection_map: {},
    };
  }

  /**
   * Renders the user's view record again; `user` is the turn's view of it when the caller has one
   * (otherwise it is read back from the write transaction).
   */
  rewrite(appId: string, userId: string, user = this.runtime.read<UserContext>('user', [appId, userId])): void {
    const key = [appId, userId];
    if (!user) {
      this.records.remove(key);
      return;
    }
    const app = this.apps.require(appId);
    const groups = this.groupsOf(appId, userId);
    const record = encodeUserView({
      platform: Buffer.from(JSON.stringify(this.render(user, groups))),
      me: Buffer.from(JSON.stringify(this.render(user, groups, app.schema))),
      schemaStamp: app.updated_at,
      access: { state: user.state, ...sessionMarksOf(user.context) },
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
    return user && Buffer.from(JSON.stringify(this.render(user, this.groupsOf(appId, userId), app.schema)));
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
