import type { Config } from '../../config.js';
import type { ActorRuntime, ActorView } from '../../runtime/runtime.js';
import type { Database, Key, Store } from '../../storage/store.js';
import { HIGH_KEY } from '../../storage/store.js';
import { readPage, type PageRequest } from '../../storage/paging.js';
import type { ApplicationStore } from '../applications/store.js';
import { IMPLICIT_FIELDS, type AppSchema, type FieldSpec } from '../applications/schemas.js';
import type { UserContext } from '../../../machines/user.machine.js';
import { sessionMarksOf, type SessionMarks } from '../../auth/revocation.js';

/** A `{group, member}` pair as a profile lists it; the groups feature keeps these current. */
export interface GroupMembershipEntry {
  group: Record<string, unknown>;
  member: Record<string, unknown>;
}

interface StoredMeView {
  /** The app's `updated_at` when the view was rendered: a schema change makes the `/me` view stale. */
  schemaStamp: string;
  me: Uint8Array;
}

/** What the bearer step reads on every `/me` request: small, so decoding it costs next to nothing. */
export interface UserAccess extends SessionMarks {
  state: string;
}

/**
 * The read model of profiles: each user's response bodies, serialized once per change and served
 * as bytes. `rewrite` must run inside the write transaction that changed the user or a membership.
 */
export class ProfileViews {
  readonly memberships: Database<GroupMembershipEntry, Key>;
  /** Platform bodies as raw bytes (binary encoding: no decoding on the hottest read). */
  private readonly platformViews: Database<Buffer, Key>;
  private readonly meViews: Database<StoredMeView, Key>;
  private readonly access: Database<UserAccess, Key>;

  constructor(
    store: Store,
    private readonly runtime: ActorRuntime,
    private readonly apps: ApplicationStore,
    private readonly config: Config,
  ) {
    this.platformViews = store.db<Buffer>('profile_platform', { encoding: 'binary' });
    this.meViews = store.db<StoredMeView>('profile_me');
    this.access = store.db<UserAccess>('user_access');
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

  rewrite(appId: string, userId: string): void {
    const user = this.runtime.read<UserContext>('user', [appId, userId]);
    const key = [appId, userId];
    if (!user) {
      this.platformViews.remove(key);
      this.meViews.remove(key);
      this.access.remove(key);
      return;
    }
    const app = this.apps.require(appId);
    const groups = this.groupsOf(appId, userId);
    this.platformViews.put(key, Buffer.from(JSON.stringify(this.render(user, groups))));
    this.meViews.put(key, {
      schemaStamp: app.updated_at,
      me: Buffer.from(JSON.stringify(this.render(user, groups, app.schema))),
    });
    this.access.put(key, { state: user.state, ...sessionMarksOf(user.context) });
  }

  /** Prepared bytes of the platform profile, or undefined for an unknown user. */
  platformBytes(appId: string, userId: string): Uint8Array | undefined {
    return this.platformViews.get([appId, userId]);
  }

  /** The user's state and session marks, or undefined for an unknown user. */
  accessOf(appId: string, userId: string): UserAccess | undefined {
    return this.access.get([appId, userId]);
  }

  /** Prepared platform bytes of one page of an app's profiles, in user ID order. */
  platformPage(appId: string, request: Omit<PageRequest, 'prefix'>): Uint8Array[] {
    return readPage(this.platformViews, { ...request, prefix: [appId] }).map(({ value }) => value);
  }

  /** Prepared bytes of the user's own view, re-rendered when the schema changed since. */
  meBytes(appId: string, userId: string): Uint8Array | undefined {
    const view = this.meViews.get([appId, userId]);
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
