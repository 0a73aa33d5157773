import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { openStore } from './store.js';
import { FORMAT_VERSION, storedFormatVersion } from './migrations.js';
import { servingProcess } from './server-claim.js';

/** The file LMDB keeps an environment's data in, inside the data dir. */
const DATA_FILE = 'data.mdb';
const LOCK_FILE = 'lock.mdb';

export class BackupError extends Error {}

const holdsData = (dataDir: string) => existsSync(join(dataDir, DATA_FILE));

/**
 * Writes a consistent, compacted copy of the data dir's environment to `file` (one LMDB read
 * transaction, so a running server may keep writing). The copy is made beside `file` and renamed
 * into place, so `file` is either absent or complete.
 */
export async function backupDataDir(dataDir: string, file: string, options: { force?: boolean } = {}): Promise<void> {
  if (!holdsData(dataDir)) throw new BackupError(`${dataDir} holds no data to back up`);
  if ([DATA_FILE, LOCK_FILE].some((name) => resolve(dataDir, name) === resolve(file))) {
    throw new BackupError(`${file} is the data dir's own file; back up to a file outside ${dataDir}`);
  }
  if (existsSync(file) && !options.force) throw new BackupError(`${file} exists; pass --force to overwrite it`);
  const staging = await mkdtemp(join(dirname(file), '.backup-'));
  const store = openStore(dataDir);
  try {
    await store.root.backup(staging, true);
    await rename(join(staging, DATA_FILE), file);
  } finally {
    await store.close();
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Makes `dataDir` hold the environment saved in `file`. The backup is checked (it opens, carries a
 * format this build understands) before anything in `dataDir` changes. A data dir that is not empty
 * is replaced only with `force`, which must never be used while a server runs on it.
 */
export async function restoreDataDir(dataDir: string, file: string, options: { force?: boolean } = {}): Promise<void> {
  const source = await stat(file).catch(() => undefined);
  if (!source?.isFile() || !(await hasLmdbMagic(file))) throw new BackupError(`${file} is not an LMDB backup file`);
  const server = servingProcess(dataDir);
  if (server !== undefined) throw new BackupError(`${dataDir} is served by process ${server}; stop the server first`);
  if (!options.force && (await visibleEntries(dataDir)).length > 0) {
    throw new BackupError(`${dataDir} is not empty; pass --force to replace its data (stop the server first)`);
  }
  const staging = join(dataDir, `.restore-${process.pid}`);
  await rm(staging, { recursive: true, force: true });
  try {
    await mkdir(staging, { recursive: true });
    await copyFile(file, join(staging, DATA_FILE));
    await checkBackup(staging, file);
    await rm(join(dataDir, LOCK_FILE), { force: true });
    await rename(join(staging, DATA_FILE), join(dataDir, DATA_FILE));
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** LMDB's meta page magic, checked first because LMDB itself crashes the process on a foreign file. */
const LMDB_MAGIC = 0xbeefc0de;
const MAGIC_OFFSET = 24;

async function hasLmdbMagic(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(MAGIC_OFFSET + 4), 0, MAGIC_OFFSET + 4, 0);
    return bytesRead === MAGIC_OFFSET + 4 && buffer.readUInt32LE(MAGIC_OFFSET) === LMDB_MAGIC;
  } finally {
    await handle.close();
  }
}

/** Entries of `dir` other than dotfiles (a checkout's `data/.gitkeep`); none when `dir` is absent. */
async function visibleEntries(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names.filter((name) => !name.startsWith('.'));
}

async function checkBackup(dir: string, file: string): Promise<void> {
  let version: number | undefined;
  try {
    const store = openStore(dir);
    try {
      version = storedFormatVersion(store);
    } finally {
      await store.close();
    }
  } catch (error) {
    throw new BackupError(`${file} is not an LMDB backup: ${(error as Error).message}`);
  }
  if (version === undefined) throw new BackupError(`${file} is not a backup of this service (no data format version)`);
  if (version > FORMAT_VERSION) {
    throw new BackupError(`${file} has data format ${version}, newer than this build understands (${FORMAT_VERSION})`);
  }
}
