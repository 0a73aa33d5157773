import { createHash } from 'node:crypto';
import type { Store } from '../../src/storage/store.js';

/** A hash of every key and value of every named database, as raw bytes: "did anything change?". */
export function storeDigest(store: Store): string {
  const hash = createHash('sha256');
  const names = [...store.root.getKeys()].map(String).sort();
  for (const name of names) {
    hash.update(`\0db:${name}\0`);
    const db = store.root.openDB({ name, encoding: 'binary', keyEncoding: 'binary' });
    for (const { key, value } of db.getRange({})) {
      hash.update(key as Buffer);
      hash.update('\0');
      hash.update(value as Buffer);
      hash.update('\0');
    }
  }
  return hash.digest('hex');
}
