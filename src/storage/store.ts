import { open, type Database, type Key, type RootDatabase } from 'lmdb';
import { chmodSync, closeSync, fstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { storageFailure } from '../lib/errors.js';
import { DataDirNotReady } from './not-ready.js';

export type { Database, Key };

export interface DbOptions {
  /**
   * `binary` for prepared bytes served as-is; msgpack otherwise. `views` reads a `binary` database
   * without copying each value: a value (also each entry of a range) is a view over lmdb-js's shared
   * buffer, good only until the next read of any database, so it suits a range whose entries are
   * each used up before the next is read. Copying every value of a page cost ~5 times the rest of
   * reading it (docs/PERFORMANCE.md, round 23). Never written through.
   */
  encoding?: 'msgpack' | 'binary' | 'views';
}

/**
 * lmdb-js hands a decoder that copies (`needsStableBuffer` unset) its shared buffer as it is, for gets
 * and range entries alike; this one answers a view of it.
 */
const VIEWS_DECODER = {
  decode: (bytes: Buffer, size?: number) => bytes.subarray(0, size ?? bytes.length),
  encode: () => {
    throw new TypeError('A database read as views is never written through');
  },
};

/** One LMDB environment with named databases, opened on first use. */
export interface Store {
  readonly path: string;
  readonly root: RootDatabase;
  /**
   * Open databases outside `commit` callbacks (in constructors): one first opened inside a
   * transaction that rolls back is left unusable.
   */
  db<V = any>(name: string, options?: DbOptions): Database<V, Key>;
  /** Whether the environment holds a named database `name` (without opening, so without creating, it). */
  hasDb(name: string): boolean;
  /**
   * Runs `write` in one batched write transaction; resolves once it is committed. If `write` throws,
   * none of its writes are kept and the promise rejects. If the commit fails (a full disk), it rejects
   * with 503 `E_UNAVAILABLE`: nothing was kept, and the same change may be tried again. Once one has
   * failed, every later commit is refused so, until the store is opened again (`refusedAfterFailure`).
   */
  commit(write: () => void): Promise<void>;
  close(): Promise<void>;
}

export interface StoreOptions {
  /**
   * For a reader that must change nothing in the data dir (`verify`), which must exist: no file
   * is made (but LMDB's lock file where there is none, owner-only) or has its mode changed, commits
   * are refused, and a named database the data dir lacks reads as empty (opening it there would make it).
   */
  readOnly?: boolean;
}

/**
 * The environment options every store is opened with (the bench's storage probe starts from them).
 * `noSubdir` explicitly: lmdb-js would otherwise take a dotted directory name for a file name.
 */
export const ENV_OPTIONS = { compression: false, maxDbs: 64, noSubdir: false } as const;

export function openStore(path: string, options: StoreOptions = {}): Store {
  const readOnly = options.readOnly ?? false;
  if (!readOnly) mkdirSync(path, { recursive: true, mode: OWNER_ONLY_DIR });
  refuseBrokenDataFile(path);
  if (readOnly) makeLockFileOwnerOnly(path);
  const root = open({ path, ...ENV_OPTIONS, readOnly });
  if (!readOnly) ownerOnly(path);
  const absent = readOnly ? scratchDatabases() : undefined;
  /** What the first failed commit failed with: every later commit is refused (`refusedAfterFailure`). */
  let firstFailure: Promise<unknown> | undefined;
  const dbs = new Map<string, Database<any, Key>>();
  const hasDb = (name: string) => {
    // Not `root.doesExist(name)`: it answers false for the entries that name databases.
    for (const key of root.getKeys({ start: name, limit: 1 })) return key === name;
    return false;
  };
  return {
    path,
    root,
    db(name, options = {}) {
      const encoding = options.encoding ?? 'msgpack';
      const id = encoding === 'views' ? `${name} (views)` : name;
      let db = dbs.get(id);
      if (!db) {
        // Plain msgpack maps, not records: record structures are shared only up to 32 shapes, and
        // profiles have as many shapes as their data has key sets; past that every value carries
        // its structure inline and is slower to write and read. Values stored as records still
        // decode. (`useRecords` is a msgpackr option lmdb-js passes on; its types do not list it.)
        const dbOptions = encoding === 'views' ? { name, encoding: 'binary' as const, encoder: VIEWS_DECODER } : { name, encoding, useRecords: false };
        db = absent && !hasDb(name) ? absent.openDB(dbOptions) : root.openDB(dbOptions);
        dbs.set(id, db);
      }
      return db;
    },
    hasDb,
    async commit(write) {
      if (readOnly) throw new Error(`${path} is open read-only`);
      if (firstFailure) throw refusedAfterFailure(await firstFailure);
      try {
        // A child transaction: if `write` throws, its writes roll back. Plain `transaction()` batches
        // callbacks into one shared transaction and would still commit what a failed callback wrote.
        await root.childTransaction(write);
      } catch (error) {
        const cause = commitCause(error);
        if (!cause) throw error;
        firstFailure ??= cause;
        throw storageFailure(await cause);
      }
    },
    async close() {
      await root.close();
      await absent?.close();
    },
  };
}

/**
 * The 503 of a commit refused because an earlier one failed (a full disk). After a failed commit
 * lmdb-js (3.5.6) may resolve a later commit whose writes it never kept: under `ulimit -f`, with 8
 * concurrent writers of which some fit in the pages still free, about one run in three had such
 * commits, always begun after the failure (an upsert read its own new profile back as absent; a write
 * answered without reading back would have been acknowledged and lost). A restart opens lmdb-js afresh.
 */
const refusedAfterFailure = (first: unknown) =>
  storageFailure(new Error(`no write is made since a commit failed (${failureMessage(first)}): restart the server once the disk has room`, { cause: first }));

const failureMessage = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause));

/**
 * What a failed commit failed with (an errno `code` and its message: a full disk, an I/O error): lmdb-js
 * rejects the commit's writes with a bare `failure` and, at once, `commitError` with the cause. Waited
 * for only briefly: an answer must not hang on a cause that never comes. Undefined when `failure` is
 * no failed commit's.
 */
export function commitCause(failure: unknown): Promise<unknown> | undefined {
  const { commitError } = failure as { commitError?: Promise<unknown> };
  if (!commitError) return undefined;
  const cause = commitError.then(
    () => failure,
    (error: unknown) => error,
  );
  return Promise.race([cause, delay(1000, failure, { ref: false })]);
}

/**
 * Where the fields of an LMDB meta page lie, in the LMDB build lmdb-js ships (its pages open with a
 * 24-byte header). The file starts with two meta pages; the one with the higher transaction ID is
 * current.
 */
const META = { magic: 24, pageSize: 48, lastPage: 144, txnId: 152, end: 160 } as const;
const LMDB_MAGIC = 0xbeefc0de;

/**
 * Whether `file` is an LMDB file that holds every page its current meta page names. Checked before
 * LMDB opens it: LMDB maps the file and dies of SIGBUS on a page past its end (a cut-short copy), or
 * crashes on a foreign file.
 */
export function isWholeLmdbFile(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const { size } = fstatSync(fd);
    const metaAt = (offset: number) => {
      const buffer = Buffer.alloc(META.end);
      if (readSync(fd, buffer, 0, META.end, offset) < META.end || buffer.readUInt32LE(META.magic) !== LMDB_MAGIC) return undefined;
      return { pageSize: buffer.readUInt32LE(META.pageSize), lastPage: buffer.readBigUInt64LE(META.lastPage), txnId: buffer.readBigUInt64LE(META.txnId) };
    };
    const first = metaAt(0);
    if (!first || first.pageSize < 512 || first.pageSize > 65536) return false;
    const second = metaAt(first.pageSize);
    const current = second && second.txnId > first.txnId ? second : first;
    return BigInt(size) >= (current.lastPage + 1n) * BigInt(first.pageSize);
  } finally {
    closeSync(fd);
  }
}

/** The file LMDB keeps an environment's data in, inside the data dir. */
export const DATA_FILE = 'data.mdb';
/** The file in which LMDB registers the readers and the writer of an environment, beside its data file. */
export const LOCK_FILE = 'lock.mdb';

/**
 * Whether `dataDir` holds data: a data file LMDB has written to. An empty one (a first start killed
 * before LMDB wrote it) holds none, as an absent one: a read-write open makes it anew (and a read-only
 * open would crash LMDB).
 */
export const holdsData = (dataDir: string): boolean => (statSync(join(dataDir, DATA_FILE), { throwIfNoEntry: false })?.size ?? 0) > 0;

/**
 * Refuses a data dir whose data file LMDB would die of mapping (a copy of the dir cut short), so that
 * the server, the CLI and `verify` say so instead of ending on SIGBUS. An empty one is new: LMDB makes it.
 */
function refuseBrokenDataFile(path: string): void {
  const file = join(path, DATA_FILE);
  if (holdsData(path) && !isWholeLmdbFile(file)) {
    throw new DataDirNotReady(`${file} is not a whole LMDB file (cut short, or not LMDB at all): restore the data dir from a backup`);
  }
}

/**
 * Empty named databases for a read-only store, in a scratch environment of their own, made in the OS
 * temp dir on first use. Its directory is removed as soon as the environment is open, which keeps
 * working on the unlinked files (its descriptors and map stay valid): nothing is left behind, also by
 * a `verify` killed before it closes the store.
 */
function scratchDatabases() {
  let scratch: RootDatabase | undefined;
  return {
    openDB(dbOptions: { name: string }): Database<any, Key> {
      if (!scratch) {
        const dir = mkdtempSync(join(tmpdir(), 'svc-absent-dbs-'));
        try {
          scratch = open({ path: dir, ...ENV_OPTIONS });
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }
      return scratch.openDB(dbOptions);
    },
    async close() {
      await scratch?.close();
    },
  };
}

export const OWNER_ONLY_DIR = 0o700;
export const OWNER_ONLY_FILE = 0o600;

/**
 * The data dir, and the files in it, readable by their owner alone: they hold the pepper and the
 * private signing keys, which would let any local account sign tokens for any user. Also for a data
 * dir made before this rule, or by another tool.
 */
export function ownerOnly(dataDir: string): void {
  restrict(dataDir, OWNER_ONLY_DIR);
  for (const name of readdirSync(dataDir)) {
    const file = join(dataDir, name);
    if (statSync(file, { throwIfNoEntry: false })?.isFile()) restrict(file, OWNER_ONLY_FILE);
  }
}

/**
 * Only its owner may change a file's mode: another account allowed to use the data dir leaves it as it
 * is. A file gone since it was listed (the claim draft of a server starting beside this process) is
 * not narrowed either.
 */
function restrict(path: string, mode: number): void {
  try {
    chmodSync(path, mode);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code !== 'EPERM' && code !== 'ENOENT') throw error;
  }
}

/**
 * A read-only open makes LMDB's lock file where there is none (a restored data dir): it needs one to
 * read beside a server. Made first (empty: LMDB sets it up), so that it is not left readable by all,
 * as a read-only open narrows nothing after.
 */
function makeLockFileOwnerOnly(dataDir: string): void {
  try {
    closeSync(openSync(join(dataDir, LOCK_FILE), 'wx', OWNER_ONLY_FILE));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** A backup file, as private as the data it copies. */
export const ownerOnlyFile = (file: string) => restrict(file, OWNER_ONLY_FILE);

/**
 * Decodes a value's bytes the way `db` decodes what it stores, for a caller that reads the bytes
 * itself (`getBinaryFast`) to compare them before paying for a decode. Pass a copy: lmdb reuses the
 * buffer `getBinaryFast` returns, and a decoded value may keep pointing into the bytes it came from.
 */
export function decodeValue<V>(db: Database<V, Key>, bytes: Uint8Array): V {
  const { decoder } = db as Database<V, Key> & { decoder?: { decode(bytes: Uint8Array): V } };
  if (!decoder) throw new TypeError('decodeValue needs a msgpack database');
  return decoder.decode(bytes);
}

/** Sorts above every ID we generate or accept, so `[prefix, HIGH]` ends a prefix range. */
export const HIGH_KEY = '\uffff';

/**
 * Whether an unhandled rejection is lmdb-js's own note of a failed commit (a full disk): besides the
 * promise of the write that failed, which answers its request 503, it rejects internal promises that
 * nothing can observe.
 */
export const isUnobservedCommitFailure = (reason: unknown): boolean => reason instanceof Error && 'commitError' in reason;
