import { open, type Database, type Key, type RootDatabase } from 'lmdb';
import { mkdirSync } from 'node:fs';

export type { Database, Key };

export interface DbOptions {
  /** `binary` for prepared bytes served as-is; msgpack otherwise. */
  encoding?: 'msgpack' | 'binary';
}

/** One LMDB environment with named databases, opened on first use. */
export interface Store {
  readonly path: string;
  readonly root: RootDatabase;
  /**
   * Open databases outside `commit` callbacks (in constructors): one first opened inside a
   * transaction that rolls back is left unusable.
   */
  db<V = any>(name: string, options?: DbOptions): Database<V, Key>;
  /**
   * Runs `write` in one batched write transaction; resolves once it is committed. If `write` throws,
   * none of its writes are kept and the promise rejects.
   */
  commit(write: () => void): Promise<void>;
  close(): Promise<void>;
}

export function openStore(path: string): Store {
  mkdirSync(path, { recursive: true });
  // noSubdir explicitly: lmdb-js would otherwise take a dotted directory name for a file name.
  const root = open({ path, compression: false, maxDbs: 64, noSubdir: false });
  const dbs = new Map<string, Database<any, Key>>();
  return {
    path,
    root,
    db(name, options = {}) {
      let db = dbs.get(name);
      if (!db) {
        db = root.openDB({ name, encoding: options.encoding ?? 'msgpack' });
        dbs.set(name, db);
      }
      return db;
    },
    async commit(write) {
      // A child transaction: if `write` throws, its writes roll back. Plain `transaction()` batches
      // callbacks into one shared transaction and would still commit what a failed callback wrote.
      await root.childTransaction(write);
    },
    async close() {
      await root.close();
    },
  };
}

/** Sorts above every ID we generate or accept, so `[prefix, HIGH]` ends a prefix range. */
export const HIGH_KEY = '\uffff';
