import { notFound } from '../../lib/errors.js';
import { jsonEqual } from '../../lib/json-equal.js';
import { newId } from '../../lib/ids.js';
import type { Deps } from '../../deps.js';
import type { UserContext } from '../../../machines/user.machine.js';
import type { AppSchema } from '../applications/schemas.js';
import { USER_KIND, userKey, userLock } from './directory.js';
import { checkNewUserId } from './schemas.js';
import {
  applyProfileChange,
  checkRequiredFields,
  namesUnreadableField,
  type ChangeMode,
  type Precheck,
  type ProfileChange,
  type SchemaOf,
  type Writer,
} from './profile-change.js';
import type { ProfileFiles } from './profile-files.js';
import type { SessionOf } from '../../auth/revocation.js';
import { runRemovingUser } from '../groups/user-removal.js';

export type UserState = 'enabled' | 'disabled';

/** What a write changes: the user's `data` and `attributes`, or an empty profile for a user it creates. */
const startOf = (current: UserContext | undefined) => current ?? { data: {}, attributes: {} };

interface WriteOptions {
  writer: Writer;
  mode: ChangeMode;
  /** An absent user is created (platform upsert). */
  create?: boolean;
  /** A `/me` write's caller, checked again in the turn. */
  caller?: SessionOf;
}

/** Profile writes: each one a turn that sends one event to the user machine, files staged alongside. */
export class ProfileService {
  constructor(
    private readonly deps: Deps,
    private readonly files: ProfileFiles,
  ) {}

  /**
   * Applies the change `read` makes of the request as `writer` may, by the rules of the app's schema
   * as it is in the write's turn: a schema change committed while the write waited for its user counts.
   * `userId` undefined makes a new user (with `create`), its ID drawn in the turn, so that it sorts after
   * every user committed before it (reading the request may decode images for a while). Answers the user's ID.
   */
  async write(
    appId: string,
    userId: string | undefined,
    read: (schemaOf: SchemaOf, precheck: Precheck) => Promise<ProfileChange>,
    options: WriteOptions,
  ): Promise<string> {
    const schemaOf = () => this.deps.apps.require(appId).schema;
    // The write's turn checks again: the profile may change meanwhile. A user that is absent and not to
    // be created is the turn's 404.
    const precheck = (change: ProfileChange) => {
      const current = userId === undefined ? undefined : this.deps.users.get(appId, userId);
      if (!current && !options.create) return;
      if (!current && userId !== undefined) checkNewUserId(userId, 'user');
      this.nextProfile(current?.context, change, change.readBy ?? schemaOf(), userId, options);
    };
    for (;;) {
      const change = await read(schemaOf, precheck);
      // Read again only if read by a schema that a change replaced before the write's turn: rare.
      const written = await this.writeInTurn(appId, userId, change, schemaOf, options);
      if (written !== undefined) return written;
    }
  }

  /** The user's ID; undefined, changing nothing, when `change` was read by another schema than the turn's. */
  private writeInTurn(
    appId: string,
    requestedId: string | undefined,
    change: ProfileChange,
    schemaOf: SchemaOf,
    options: WriteOptions,
  ): Promise<string | undefined> {
    const { users, runtime } = this.deps;
    return runtime.run(requestedId === undefined ? [] : [userLock(appId, requestedId)], (turn) => {
      // The app record's cached schema: the same object for as long as the record is unchanged.
      const schema = schemaOf();
      if (change.readBy !== undefined && change.readBy !== schema) return undefined;
      const userId = requestedId ?? turn.lockNew(() => newId('user', turn.now), (id) => [userLock(appId, id)]);
      const current = options.caller ? users.requireCaller(turn, appId, options.caller) : turn.get<UserContext>(USER_KIND, userKey(appId, userId));
      if (!current && !options.create) throw notFound('user', userId);
      // Here too, not only in the precheck: a user under such an ID, stored before the rule, may be deleted while this waits.
      if (!current) checkNewUserId(userId, 'user');
      const before = startOf(current?.context);
      const next = this.nextProfile(current?.context, change, schema, userId, options);
      const unchanged =
        jsonEqual(next.data, before.data) && jsonEqual(next.attributes, before.attributes) && !namesUnreadableField(change, schema, options.writer);
      // A write that changes nothing is no event: `meta.modified` keeps meaning "last changed".
      if (current && !unchanged) {
        users.update(turn, appId, userId, next, current);
      } else if (!current) {
        users.create(turn, { appId, id: userId, data: next.data, attributes: next.attributes });
      }
      // Even unchanged: a value kept from before its field held files may describe an upload it never stored.
      this.files.stage(turn, appId, userId, before.data, next.data, change.files);
      return userId;
    });
  }

  /** `data` and `attributes` after `change`, or 400 with every problem of it; a profile that a write creates starts whole. */
  private nextProfile(current: UserContext | undefined, change: ProfileChange, schema: AppSchema, userId: string | undefined, options: WriteOptions) {
    const rules = { schema, writer: options.writer, mode: options.mode, userId, reservedNamespace: this.deps.config.names.reservedNamespace };
    const next = applyProfileChange(startOf(current), change, rules);
    if (!current) checkRequiredFields(schema, next.data);
    return next;
  }

  /** Moves the user to `state`; asking for the state it is in changes nothing. */
  async setState(appId: string, userId: string, state: UserState): Promise<void> {
    const { users, runtime } = this.deps;
    await runtime.run([userLock(appId, userId)], (turn) => {
      const current = turn.get<UserContext>(USER_KIND, userKey(appId, userId));
      if (!current) throw notFound('user', userId);
      if (current.state === state) return;
      users.change(turn, appId, userId, { type: state === 'disabled' ? 'user.disable' : 'user.enable', at: turn.now });
    });
  }

  /**
   * Deletes the user and, in the same turn, its memberships and invites (ADDENDUM §3 `groups` stays consistent),
   * files, sessions, refresh tokens and magic links.
   */
  async remove(appId: string, userId: string): Promise<void> {
    const { users, groups, sessions, magicLinks } = this.deps;
    await runRemovingUser(groups, appId, userId, [userLock(appId, userId)], (turn) => {
      users.remove(turn, appId, userId);
      this.files.dropAll(turn, appId, userId);
      sessions.forgetAll(turn, appId, userId);
      magicLinks.forgetAll(turn, appId, userId);
    });
  }

  async promptPasskey(appId: string, caller: SessionOf, prompted: string): Promise<void> {
    const { users, runtime } = this.deps;
    const { userId } = caller;
    await runtime.run([userLock(appId, userId)], (turn) => {
      users.requireCaller(turn, appId, caller);
      users.change(turn, appId, userId, { type: 'user.promptPasskey', prompted, at: turn.now });
    });
  }
}
