import { ApiError, notFound, validationError } from '../../lib/errors.js';
import { isoDate } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { jsonEqual } from '../../lib/json-equal.js';
import { HIGH_KEY, type Database, type Key } from '../../storage/store.js';
import { pageEntries, type PageRequest } from '../../storage/paging.js';
import { listBytes } from '../../http/list-bytes.js';
import type { Turn } from '../../runtime/runtime.js';
import type { Deps } from '../../deps.js';
import {
  MAX_CREDENTIAL_YEARS,
  mintCredential,
  showCredential,
  yearsAfter,
  type Credential,
  type CredentialOptions,
  type StoredCredential,
} from './credentials.js';
import { CLIENT_ID_PATTERN, CONFIG_DEFAULTS, type ClientBody, type ClientUpdate, type CredentialBody, type OidcConfig } from './schemas.js';

export interface StoredClient {
  id: string;
  app_id: string;
  name: string;
  description: string;
  config: OidcConfig;
  created_at: string;
  updated_at: string;
}

export interface OidcClient extends StoredClient {
  credentials: Credential[];
}

/** The clear secret of a credential minted by this request, shown in its answer only. */
interface Revealed {
  clientId: string;
  secret: string;
}

/** A client's config as it is shown: every field SPEC names, a default where none was given. */
const shownConfig = (config: OidcConfig): OidcConfig => ({ ...CONFIG_DEFAULTS, ...config });

export const clientCount = (appId: string): Key => ['oidc_clients', appId];

/** A client per front end, with room to spare: a link's redirect check reads the places of every client of its app (`RegisteredRedirects`). */
export const MAX_CLIENTS_PER_APP = 100;

/** Enough for rotation with room to spare; expired credentials count, as they stay listed until deleted. */
export const MAX_CREDENTIALS_PER_CLIENT = 10;
const clientLock = (appId: string, clientId: string) => `oidc_client:${appId}\u0000${clientId}`;
/** Held by every create of the app: two of them cannot both take the last place under the cap. */
const clientCreationLock = (appId: string) => `oidc_clients:${appId}`;

/**
 * OIDC client registrations of an application: plain records keyed `[appId, clientId]` (so an app can
 * only ever reach its own), credentials keyed `[appId, clientId, oidccId]`, and an exact per-app count.
 * Every change runs as one runtime turn: the client's lock held, all writes in one transaction.
 */
export class OidcClientService {
  private readonly clients: Database<StoredClient, Key>;
  private readonly credentials: Database<StoredCredential, Key>;

  constructor(private readonly deps: Pick<Deps, 'store' | 'runtime' | 'clock' | 'pepper' | 'redirects' | 'clientOrigins'>) {
    this.clients = deps.store.db<StoredClient>('oidc_clients');
    this.credentials = deps.store.db<StoredCredential>('oidc_credentials');
  }

  /**
   * A page as the JSON bytes of `{total_results, results}`. A client may hold up to 1 MiB of `config`:
   * `listBytes` refuses a page too large to build.
   */
  list(appId: string, page: Omit<PageRequest, 'prefix'>): Buffer {
    const now = this.deps.clock.now();
    const entries = pageEntries(this.clients, { prefix: [appId], ...page });
    return listBytes(this.deps.runtime.counter(clientCount(appId)), entries, ({ value }) => Buffer.from(JSON.stringify(this.show(value, now))), 'clients');
  }

  get(appId: string, clientId: string): OidcClient {
    return this.show(this.require(appId, clientId), this.deps.clock.now());
  }

  /** A new client with one generated credential, whose secret this answer shows in clear. */
  create(appId: string, body: ClientBody): Promise<OidcClient> {
    const id = newId('oidc_client');
    return this.deps.runtime.run([clientCreationLock(appId), clientLock(appId, id)], (turn) => {
      if (this.deps.runtime.counter(clientCount(appId)) >= MAX_CLIENTS_PER_APP) {
        throw new ApiError(400, 'E_VALIDATION', `An application holds at most ${MAX_CLIENTS_PER_APP} OIDC clients: delete one before adding another`);
      }
      const at = isoDate(turn.now);
      const client: StoredClient = { id, app_id: appId, ...body, created_at: at, updated_at: at };
      this.putClient(turn, client);
      turn.count(clientCount(appId), 1);
      const { stored, secret } = this.stageCredential(turn, client, {});
      return this.show(client, turn.now, [stored], { clientId: stored.client_id, secret });
    });
  }

  /**
   * PUT replaces description and config as a whole, and the name when given; credentials and created_at stay.
   * A body that leaves the client as a GET shows it (a config default sent back included) writes nothing.
   */
  replace(appId: string, clientId: string, body: ClientUpdate): Promise<OidcClient> {
    return this.deps.runtime.run([clientLock(appId, clientId)], (turn) => {
      const current = this.require(appId, clientId);
      const name = body.name ?? current.name;
      if (name === current.name && body.description === current.description && jsonEqual(shownConfig(body.config), shownConfig(current.config))) {
        return this.show(current, turn.now);
      }
      const client: StoredClient = { ...current, ...body, name, updated_at: isoDate(turn.now) };
      this.putClient(turn, client);
      return this.show(client, turn.now);
    });
  }

  remove(appId: string, clientId: string): Promise<void> {
    return this.deps.runtime.run([clientLock(appId, clientId)], (turn) => {
      this.require(appId, clientId);
      for (const credential of this.credentialsOf(appId, clientId)) {
        turn.del(this.credentials, [appId, clientId, credential.oidc_client_configuration_id]);
      }
      turn.del(this.clients, [appId, clientId]);
      this.forgetPlacesAtCommit(turn, appId);
      turn.count(clientCount(appId), -1);
    });
  }

  /** Adds a credential (rotation's first half); the answer is the credential with its secret in clear. */
  addCredential(appId: string, clientId: string, body: CredentialBody): Promise<Credential> {
    return this.deps.runtime.run([clientLock(appId, clientId)], (turn) => {
      const client = this.require(appId, clientId);
      if (this.credentials.getKeysCount(this.credentialRange(appId, clientId)) >= MAX_CREDENTIALS_PER_CLIENT) {
        throw validationError({
          credentials: [`a client holds at most ${MAX_CREDENTIALS_PER_CLIENT} credentials, expired ones included: delete one before adding another`],
        });
      }
      const expiresAt = body.expires === undefined ? undefined : Date.parse(body.expires);
      if (expiresAt !== undefined && expiresAt <= turn.now) {
        throw validationError({ expires: ['must be in the future'] });
      }
      if (expiresAt !== undefined && expiresAt > yearsAfter(turn.now, MAX_CREDENTIAL_YEARS)) {
        throw validationError({ expires: [`must be at most ${MAX_CREDENTIAL_YEARS} years ahead`] });
      }
      const { stored, secret } = this.stageCredential(turn, client, { name: body.name, app_variant_id: body.app_variant_id, expiresAt });
      this.touch(turn, client);
      return showCredential(stored, turn.now, secret);
    });
  }

  /** Deletes a credential by its `client_id`: it stops being valid at once. */
  removeCredential(appId: string, clientId: string, credentialClientId: string): Promise<void> {
    return this.deps.runtime.run([clientLock(appId, clientId)], (turn) => {
      const client = this.require(appId, clientId);
      const credential = this.credentialsOf(appId, clientId).find((c) => c.client_id === credentialClientId);
      if (!credential) throw notFound('credential', credentialClientId);
      turn.del(this.credentials, [appId, clientId, credential.oidc_client_configuration_id]);
      this.touch(turn, client);
    });
  }

  /**
   * Another app's client is as absent as one that never existed, and so is an ID of a shape never
   * issued (looked up, one past LMDB's key size would throw).
   */
  private require(appId: string, clientId: string): StoredClient {
    const client = CLIENT_ID_PATTERN.test(clientId) ? this.clients.get([appId, clientId]) : undefined;
    if (!client) throw notFound('oidc_client', clientId);
    return client;
  }

  /** A client written whole: its `config`, so the places its app's links may go to and its origins, may change. */
  private putClient(turn: Turn, client: StoredClient): void {
    turn.put(this.clients, [client.app_id, client.id], client);
    this.forgetPlacesAtCommit(turn, client.app_id);
  }

  /**
   * Not before the commit: a link checked meanwhile would keep the old places read anew, and a browser
   * would be let in by an origin not yet stored. After it and before the answer, so no check sees the
   * old places or origins once the change is acknowledged.
   */
  private forgetPlacesAtCommit(turn: Turn, appId: string): void {
    turn.afterCommit(() => {
      this.deps.redirects.forget(appId);
      this.deps.clientOrigins.forget();
    });
  }

  private credentialRange(appId: string, clientId: string) {
    return { start: [appId, clientId, ''], end: [appId, clientId, HIGH_KEY] };
  }

  private credentialsOf(appId: string, clientId: string): StoredCredential[] {
    return [...this.credentials.getRange(this.credentialRange(appId, clientId)).map(({ value }) => value)];
  }

  private stageCredential(turn: Turn, client: StoredClient, options: CredentialOptions) {
    const minted = mintCredential(this.deps.pepper, client.app_id, options, turn.now);
    turn.put(this.credentials, [client.app_id, client.id, minted.stored.oidc_client_configuration_id], minted.stored);
    return minted;
  }

  /** A change to a client's credentials is a change to the client. */
  private touch(turn: Turn, client: StoredClient): void {
    turn.put(this.clients, [client.app_id, client.id], { ...client, updated_at: isoDate(turn.now) });
  }

  private show(
    client: StoredClient,
    now: number,
    credentials = this.credentialsOf(client.app_id, client.id),
    revealed?: Revealed,
  ): OidcClient {
    return {
      id: client.id,
      app_id: client.app_id,
      name: client.name,
      description: client.description,
      config: shownConfig(client.config),
      created_at: client.created_at,
      updated_at: client.updated_at,
      credentials: credentials.map((c) =>
        showCredential(c, now, c.client_id === revealed?.clientId ? revealed.secret : undefined),
      ),
    };
  }
}
