import { forbidden, notFound } from '../../lib/errors.js';
import { fitsIdLength, newId, randomBase32, randomToken } from '../../lib/ids.js';
import { isoDate, type Clock } from '../../lib/clock.js';
import { hmacSecret, maskSecret, sameSecret, secretMatches } from '../../lib/secrets.js';
import { decodeValue, type Store } from '../../storage/store.js';
import { emptySchema, fieldSpec, type AppSchema } from './schemas.js';
import { jsonEqual } from '../../lib/json-equal.js';

export interface Application {
  id: string;
  name: string;
  schema: AppSchema;
  created_at: string;
  updated_at: string;
  /** When `schema` last changed; absent on applications stored before it was kept (then `updated_at`). */
  schema_updated_at?: string;
  /**
   * Address field → when a schema change last took from users the right to write it. A user that
   * signed in before then may have written someone else's address there itself: it names that user
   * only once proved (see `UserDirectory.addressHolder`). Not shown (`shownApp`).
   */
  addresses_closed_at?: Partial<Record<AddressField, string>>;
}

type AddressField = 'email' | 'phone_number';
const ADDRESS_FIELDS: readonly AddressField[] = ['email', 'phone_number'];

const userWrites = (schema: AppSchema, field: AddressField): boolean => fieldSpec(schema, field)?.user_writable === true;

/** `addresses_closed_at` after `schema` replaces `current`'s at `at`. */
function addressesClosedAt(current: Application, schema: AppSchema, at: string): Application['addresses_closed_at'] {
  let closed = current.addresses_closed_at;
  for (const field of ADDRESS_FIELDS) {
    if (userWrites(current.schema, field) && !userWrites(schema, field)) closed = { ...closed, [field]: at };
  }
  return closed;
}

/** An application as the operator is shown it: without the marks kept for the service's own use. */
export const shownApp = ({ addresses_closed_at: _, ...shown }: Application): Omit<Application, 'addresses_closed_at'> => shown;

/**
 * What a user's `/me` body is stamped with, rendered under the app's schema: it moves with the schema
 * only, so renaming an app does not leave every `/me` body to be rendered again on each read.
 */
export const schemaStampOf = (app: Application): string => app.schema_updated_at ?? app.updated_at;

interface StoredCredential {
  key: string;
  app_id: string;
  secret_hash: Uint8Array;
  secret_masked: string;
  created_at: string;
}

/** A credential as shown: the secret only masked. */
export interface CredentialInfo {
  key: string;
  app_id: string;
  secret: string;
  created_at: string;
}

/** A credential just made: the one time its secret is shown. */
export interface NewCredential extends CredentialInfo {
  secret: string;
}

const showCredential = (c: StoredCredential): CredentialInfo => ({
  key: c.key,
  app_id: c.app_id,
  secret: c.secret_masked,
  created_at: c.created_at,
});

/** Applications and their key/secret pairs. Secrets are stored only as HMACs under the pepper. */
export class ApplicationStore {
  private readonly apps;
  private readonly credentials;
  private readonly appCredentials;
  /**
   * Decoded app records with the bytes they came from: a read is one get and a byte compare instead of
   * a decode, and a change made by another process (the CLI) still shows at once.
   */
  private readonly decoded = new Map<string, { bytes: Buffer; app: Application }>();
  /** key → secret already verified against its HMAC; existence in LMDB is still checked every time. */
  private readonly verified = new Map<string, { secret: string; appId: string }>();

  constructor(
    private readonly store: Store,
    private readonly pepper: Buffer,
    private readonly clock: Clock,
  ) {
    this.apps = store.db<Application>('apps');
    this.credentials = store.db<StoredCredential>('credentials');
    this.appCredentials = store.db<true>('app_credentials');
  }

  /** The app record; shared and frozen, so copy it to change it. */
  get(appId: string): Application | undefined {
    if (!fitsIdLength(appId)) return undefined;
    // LMDB's reused buffer, sized to the value: compared in place, copied only when it changed.
    const current = this.apps.getBinaryFast(appId);
    if (!current) {
      this.decoded.delete(appId);
      return undefined;
    }
    const cached = this.decoded.get(appId);
    if (cached && cached.bytes.length === current.length && cached.bytes.compare(current, 0, current.length) === 0) return cached.app;
    const bytes = Uint8Array.prototype.slice.call(current, 0, current.length) as Buffer;
    const app = deepFreeze(decodeValue(this.apps, bytes));
    this.decoded.set(appId, { bytes, app });
    return app;
  }

  require(appId: string): Application {
    const app = this.get(appId);
    if (!app) throw notFound('application', appId);
    return app;
  }

  list(): Application[] {
    return [...this.apps.getRange({}).map(({ value }) => value)];
  }

  isEmpty(): boolean {
    return this.apps.getKeysCount({ limit: 1 }) === 0;
  }

  async create(name: string, schema: AppSchema = emptySchema()): Promise<Application> {
    const app = this.newApp(name, schema);
    await this.store.commit(() => this.apps.put(app.id, app));
    return app;
  }

  /**
   * The first application with its first credential, in one commit, made only while there is no
   * application at all (checked in that commit: a CLI `app create` may land after the caller looked):
   * a crash or a full disk leaves both or neither, never an app whose credential was never shown.
   */
  async createFirst(name: string): Promise<{ app: Application; credential: NewCredential } | undefined> {
    const app = this.newApp(name, emptySchema());
    const { stored, secret } = this.newCredential(app.id);
    let made = false;
    await this.store.commit(() => {
      if (!this.isEmpty()) return;
      this.apps.put(app.id, app);
      this.putCredential(stored);
      made = true;
    });
    return made ? { app, credential: { ...showCredential(stored), secret } } : undefined;
  }

  private newApp(name: string, schema: AppSchema): Application {
    const at = isoDate(this.clock.now());
    return { id: newId('app'), name, schema, created_at: at, updated_at: at, schema_updated_at: at };
  }

  async update(appId: string, changes: { name?: string; schema?: AppSchema }): Promise<Application> {
    this.require(appId);
    let next!: Application;
    // Read inside the write transaction: a concurrent update (another request, the CLI) is never lost.
    await this.store.commit(() => {
      const current = this.require(appId);
      // Strictly later than the last: `/me` bodies are stamped with the schema's and re-rendered when it moves.
      const at = isoDate(Math.max(this.clock.now(), Date.parse(current.updated_at) + 1));
      const schemaChanged = changes.schema !== undefined && !jsonEqual(changes.schema, current.schema);
      next = { ...current, ...changes, updated_at: at, schema_updated_at: schemaChanged ? at : schemaStampOf(current) };
      const closed = schemaChanged ? addressesClosedAt(current, changes.schema!, at) : current.addresses_closed_at;
      if (closed !== undefined) next.addresses_closed_at = closed;
      this.apps.put(appId, next);
    });
    return next;
  }

  async createCredential(appId: string): Promise<NewCredential> {
    this.require(appId);
    const { stored, secret } = this.newCredential(appId);
    await this.store.commit(() => this.putCredential(stored));
    return { ...showCredential(stored), secret };
  }

  private newCredential(appId: string): { stored: StoredCredential; secret: string } {
    const secret = `sec_${randomToken(32)}`;
    const stored: StoredCredential = {
      key: `key_${randomBase32(24)}`,
      app_id: appId,
      secret_hash: hmacSecret(this.pepper, secret),
      secret_masked: maskSecret(secret),
      created_at: isoDate(this.clock.now()),
    };
    return { stored, secret };
  }

  private putCredential(stored: StoredCredential): void {
    this.credentials.put(stored.key, stored);
    this.appCredentials.put([stored.app_id, stored.key], true);
  }

  listCredentials(appId: string): CredentialInfo[] {
    this.require(appId);
    const keys = this.appCredentials.getKeys({ start: [appId, ''], end: [appId, '\uffff'] });
    const stored = [...keys].flatMap((k) => this.credentials.get((k as string[])[1]) ?? []);
    // Keys are random, so the index is in no useful order: oldest first, as every other list (ISO
    // stamps of one width, so text order is time order; keys tell apart those of one millisecond).
    const order = (c: StoredCredential) => c.created_at + c.key;
    return stored.sort((a, b) => (order(a) < order(b) ? -1 : 1)).map(showCredential);
  }

  /** Deleting a credential revokes it for the very next request. */
  async revokeCredential(appId: string, key: string): Promise<void> {
    // Read inside the write transaction: of concurrent deletes (requests, the CLI) only one finds it.
    await this.store.commit(() => {
      this.require(appId);
      const c = this.credential(key);
      if (!c || c.app_id !== appId) throw notFound('credential', key);
      this.credentials.remove(key);
      this.appCredentials.remove([appId, key]);
    });
    this.verified.delete(key);
  }

  /** The app a key/secret pair belongs to, or undefined when the pair is not valid now. */
  authenticate(key: string, secret: string): string | undefined {
    // The existence check runs every time so a revocation from another process (the CLI) counts at once.
    if (!fitsIdLength(key) || !this.credentials.doesExist(key)) {
      this.verified.delete(key);
      return undefined;
    }
    const cached = this.verified.get(key);
    if (cached && sameSecret(cached.secret, secret)) return cached.appId;
    const stored = this.credentials.get(key);
    if (!stored || !secretMatches(this.pepper, secret, stored.secret_hash)) return undefined;
    this.verified.set(key, { secret, appId: stored.app_id });
    return stored.app_id;
  }

  /** The app a publishable key belongs to (for endpoints that take the key alone). */
  appOfKey(key: string): string | undefined {
    return this.credential(key)?.app_id;
  }

  /** A credential by its key, as sent by a caller: one too long for any key names none. */
  private credential(key: string): StoredCredential | undefined {
    return fitsIdLength(key) ? this.credentials.get(key) : undefined;
  }
}

export function assertSameApp(callerAppId: string, pathAppId: string): void {
  if (callerAppId !== pathAppId) throw forbidden('These credentials belong to another application');
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
