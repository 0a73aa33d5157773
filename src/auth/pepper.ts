import { randomBytes } from 'node:crypto';
import type { Store } from '../storage/store.js';
import { DataDirNotReady } from '../storage/not-ready.js';

const PEPPER_KEY = 'secret_pepper';

/**
 * The server-side key under which every secret is HMAC'd before it is stored. It lives in the data
 * dir (so a backup restores working credentials) and never leaves the process otherwise. Made on
 * first start; without `create`, a data dir that has none is refused instead.
 */
export async function loadPepper(store: Store, options: { create?: boolean } = {}): Promise<Buffer> {
  const meta = store.db('meta');
  const existing = meta.get(PEPPER_KEY) as Uint8Array | undefined;
  if (existing) return Buffer.from(existing);
  // A new pepper would leave every stored secret (credentials, refresh tokens, links) unmatchable.
  if (store.hasDb('apps') && store.db('apps').getKeysCount({ limit: 1 }) > 0) {
    throw new DataDirNotReady(`${store.path} holds applications but no secret pepper: restore it from a backup`);
  }
  if (options.create === false) throw new DataDirNotReady(`${store.path} has no secret pepper yet: a server start makes one`);
  let pepper = randomBytes(32);
  await store.commit(() => {
    // Read again in the write transaction: another process opening the same fresh data dir (a CLI
    // command beside a first start) may have made one since, and every secret it stored is HMAC'd under it.
    const made = meta.get(PEPPER_KEY) as Uint8Array | undefined;
    if (made) pepper = Buffer.from(made);
    else meta.put(PEPPER_KEY, pepper);
  });
  return pepper;
}
