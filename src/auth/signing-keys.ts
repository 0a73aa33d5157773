import { exportJWK, generateKeyPair, importJWK, type JWK, type CryptoKey } from 'jose';
import type { Store } from '../storage/store.js';
import type { Clock } from '../lib/clock.js';
import { MAX_ACCESS_TOKEN_TTL_SECONDS } from '../config.js';

/** A key as `signing_keys` holds it, under its kid. */
export interface StoredKey {
  kid: string;
  createdAt: number;
  privateJwk: JWK;
  publicJwk: JWK;
}

export interface SigningKey {
  kid: string;
  createdAt: number;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: JWK;
}

export const SIGNING_ALG = 'EdDSA';

/**
 * How long a key's tokens may live after it stopped signing: the longest lifetime allowed (a process
 * rotating keys, a CLI, may not run with the server's), plus a minute for a token signed as its
 * successor arrived (the server read the key list just before).
 */
const TOKENS_OUTLIVE_KEY_MS = MAX_ACCESS_TOKEN_TTL_SECONDS * 1000 + 60_000;

async function toSigningKey(stored: StoredKey): Promise<SigningKey> {
  return {
    kid: stored.kid,
    createdAt: stored.createdAt,
    privateKey: (await importJWK(stored.privateJwk, SIGNING_ALG)) as CryptoKey,
    publicKey: (await importJWK(stored.publicJwk, SIGNING_ALG)) as CryptoKey,
    publicJwk: stored.publicJwk,
  };
}

/**
 * Ed25519 signing keys, made on first start and kept in the data dir. The newest signs; older ones
 * stay published (JWKS) and verifying until every token they signed has expired.
 */
export class SigningKeys {
  private readonly db;
  private keys: SigningKey[] = [];
  private readonly reloadListeners: Array<() => void> = [];

  private constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {
    this.db = store.db<StoredKey>('signing_keys');
  }

  /**
   * Read-only (`verify`), no key is made or loaded here (`refresh` loads them when one is needed): one
   * that does not parse is then the `signing keys` invariant's to report.
   */
  static async open(store: Store, clock: Clock, options: { readOnly?: boolean } = {}): Promise<SigningKeys> {
    const keys = new SigningKeys(store, clock);
    if (options.readOnly) return keys;
    await keys.reload();
    if (keys.keys.length === 0) await keys.rotate();
    return keys;
  }

  /** Re-reads the keys (another process, the CLI, may have rotated them). */
  async reload(): Promise<void> {
    const stored = [...this.db.getRange({}).map(({ value }) => value)].sort((a, b) => a.createdAt - b.createdAt);
    this.keys = await Promise.all(stored.map(toSigningKey));
    for (const listener of this.reloadListeners) listener();
  }

  /**
   * Calls `listener` after every reload, whichever caller's `refresh` noticed the change: one that
   * remembers what dropped keys signed must forget it then, not at its own next read of the list.
   */
  onReload(listener: () => void): void {
    this.reloadListeners.push(listener);
  }

  /**
   * Picks up keys rotated by another process (`keys rotate`); only a key-list read when nothing changed.
   */
  async refresh(): Promise<void> {
    const stored = [...this.db.getKeys({})].map(String).sort().join(' ');
    const loaded = this.keys.map((k) => k.kid).sort().join(' ');
    if (stored !== loaded) await this.reload();
  }

  /**
   * Adds a new current key; keys retired for longer than a token's lifetime are dropped, and with
   * `revoke` every other key at once (one feared leaked): the tokens they signed are refused from then on.
   */
  async rotate(options: { revoke?: boolean } = {}): Promise<SigningKey> {
    const now = this.clock.now();
    const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { crv: 'Ed25519', extractable: true });
    const [privateJwk, publicJwk] = await Promise.all([exportJWK(privateKey), exportJWK(publicKey)]);
    // A key stops signing when its successor arrives; no token it signed is accepted past `latestExpiry`.
    const expired = this.keys.slice(0, -1).filter((k, i) => this.keys[i + 1].createdAt + TOKENS_OUTLIVE_KEY_MS < now);
    await this.store.commit(() => {
      // Chosen in the write transaction: another process rotating in the same second (the CLI beside a
      // server) may have taken the kid since this one read the list, and its key would be overwritten.
      // After the newest key though the clock was stepped back since (NTP): the newest key is the one that signs.
      const newest = Math.max(-Infinity, ...this.db.getRange({}).map(({ value }) => value.createdAt));
      const createdAt = Math.max(now, newest + 1);
      let seconds = Math.floor(createdAt / 1000);
      while (this.db.doesExist(`sig-${seconds}`)) seconds++;
      const kid = `sig-${seconds}`;
      const named = { kid, alg: SIGNING_ALG, use: 'sig' };
      this.db.put(kid, { kid, createdAt, privateJwk: { ...privateJwk, ...named }, publicJwk: { ...publicJwk, ...named } });
      const dropped = options.revoke ? [...this.db.getKeys({})].map(String).filter((k) => k !== kid) : expired.map((k) => k.kid);
      for (const key of dropped) this.db.remove(key);
    });
    await this.reload();
    return this.current();
  }

  current(): SigningKey {
    return this.keys[this.keys.length - 1];
  }

  find(kid: string): SigningKey | undefined {
    return this.keys.find((k) => k.kid === kid);
  }

  /**
   * The latest `exp` (ms) a token signed by `kid` may carry: one lifetime after the key stopped signing,
   * or after `now` while it signs (none once it is dropped). So every token of a key has expired by the
   * time the key is dropped, whether or not a process remembers having verified it.
   */
  latestExpiry(kid: string, now: number): number {
    const index = this.keys.findIndex((k) => k.kid === kid);
    if (index < 0) return -Infinity;
    return Math.min(now, this.keys[index + 1]?.createdAt ?? Infinity) + TOKENS_OUTLIVE_KEY_MS;
  }

  /** The public keys as a JWKS document. */
  jwks(): { keys: JWK[] } {
    return { keys: this.keys.map((k) => k.publicJwk) };
  }
}

/** `keys rotate [--revoke]` (CLI): makes a new current key; answers its kid and every kid still published. */
export async function rotateSigningKeys(keys: SigningKeys, options: { revoke?: boolean } = {}): Promise<{ kid: string; published: string[] }> {
  const { kid } = await keys.rotate(options);
  return { kid, published: keys.jwks().keys.map((k) => String(k.kid)) };
}
