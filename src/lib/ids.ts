import { monotonicFactory } from 'ulid';
import { randomBytes, randomFillSync } from 'node:crypto';

/**
 * ulid's random source, `[0, 1)` from a pool of random bytes refilled 4 kB at a time: its own asks
 * the system for one byte per character, sixteen calls per ID.
 */
function pooledRandom(): () => number {
  const pool = Buffer.alloc(4096);
  let at = pool.length;
  return () => {
    if (at === pool.length) {
      randomFillSync(pool);
      at = 0;
    }
    return pool[at++] / 256;
  };
}

const nextUlid = monotonicFactory(pooledRandom());

export type IdPrefix = 'app' | 'user' | 'group' | 'member' | 'invite' | 'oidc_client' | 'oidcc';

/** Prefixed monotonic ULID: byte order is creation order, so `after` cursors are plain range starts. */
export const newId = (prefix: IdPrefix, at?: number) => `${prefix}_${nextUlid(at)}`;

/** The shape of the IDs `newId` makes with `prefix`. */
export const idPattern = (prefix: IdPrefix) => new RegExp(`^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`);

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

export function randomBase32(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += BASE32[bytes[i] & 31];
  return out;
}

/** base64url text of `bytes` random bytes (256 bits → 43 characters). */
export const randomToken = (bytes = 32) => randomBytes(bytes).toString('base64url');

/** The longest ID or key the service takes anywhere: a longer one names nothing (and would not fit an LMDB key). */
export const MAX_ID_LENGTH = 128;

/** Whether `id` may name something: one longer than `MAX_ID_LENGTH` is never looked up. */
export const fitsIdLength = (id: string): boolean => id.length <= MAX_ID_LENGTH;

/** IDs an application may give its own users (ADDENDUM §1). */
export const EXTERNAL_ID = new RegExp(`^[A-Za-z0-9_.:@|+-]{1,${MAX_ID_LENGTH}}$`);
