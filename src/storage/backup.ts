import { realpathSync, statSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, open, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { DATA_FILE, holdsData, isWholeLmdbFile, LOCK_FILE, OWNER_ONLY_DIR, openStore, ownerOnlyFile } from './store.js';
import { FORMAT_VERSION, storedFormatVersion } from './migrations.js';
import { CLAIM_FILE, claimDataDir, DataDirInUse, markWriter, removeLeftovers, writingProcess } from './server-claim.js';

export class BackupError extends Error {}

/** A backup's staging directory beside its file, named after the process that makes it. */
const BACKUP_STAGING = /^\.backup-(\d+)-/;

/**
 * Whether `file` would be written inside `dir`, whatever path names either (symbolic links, `..`):
 * a backup there could replace the live data file or the server's claim.
 */
function isInside(file: string, dir: string): boolean {
  const home = realpathSync(dir);
  const target = join(realpathSync(dirname(resolve(file))), basename(file));
  return target === home || target.startsWith(home + sep);
}

/**
 * Writes a consistent, compacted copy of the data dir's environment to `file` (one LMDB read
 * transaction, so a running server may keep writing). The copy is made beside `file` and renamed
 * into place, so `file` is either absent or complete.
 */
export async function backupDataDir(dataDir: string, file: string, options: { force?: boolean } = {}): Promise<void> {
  if (!holdsData(dataDir)) throw new BackupError(`${dataDir} holds no data to back up`);
  // Else a bare ENOENT (or ENOTDIR) from resolving the folder's real path.
  const folder = dirname(resolve(file));
  if (!statSync(folder, { throwIfNoEntry: false })?.isDirectory()) throw new BackupError(`${folder} is no directory to back up into`);
  if (isInside(file, dataDir)) throw new BackupError(`${file} is inside the data dir; back up to a file outside ${dataDir}`);
  const existing = statSync(file, { throwIfNoEntry: false });
  // Renaming the copy onto a directory fails with a bare EISDIR, after the whole copy was made.
  if (existing?.isDirectory()) throw new BackupError(`${file} is a directory; name a file to back up to`);
  if (existing && !options.force) throw new BackupError(`${file} exists; pass --force to overwrite it`);
  // A restore replaces the data file and LMDB's lock file under whoever has them open: a backup
  // then copies data being thrown away, and the lock file it made could be shared with the new data
  // file by a server started meanwhile. Marked as a writer, so that each refuses the other.
  const release = refusing(() => markWriter(dataDir));
  try {
    // A backup killed before its rename leaves its staging copy, as large as the data: the next one beside it removes it.
    removeLeftovers(dirname(file), BACKUP_STAGING);
    const staging = await mkdtemp(join(dirname(file), `.backup-${process.pid}-`));
    // Read-only: a backup needs no write access to the data it copies, and cannot change it.
    const store = openStore(dataDir, { readOnly: true });
    try {
      await store.root.backup(staging, true);
      ownerOnlyFile(join(staging, DATA_FILE));
      await syncToDisk(join(staging, DATA_FILE));
      await rename(join(staging, DATA_FILE), file);
      await syncToDisk(dirname(file));
    } finally {
      await store.close();
      await rm(staging, { recursive: true, force: true });
    }
  } finally {
    release();
  }
}

/**
 * Makes `dataDir` hold the environment saved in `file`. The backup is checked (it opens, carries a
 * format this build understands) before anything in `dataDir` changes. A data dir that is not empty
 * is replaced only with `force`, which must never be used while a server runs on it.
 */
export async function restoreDataDir(dataDir: string, file: string, options: { force?: boolean } = {}): Promise<void> {
  const source = await stat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
    throw error;
  });
  if (source === undefined) throw new BackupError(`${file} does not exist`);
  if (source.isDirectory()) throw new BackupError(`${file} is a directory, not a backup file`);
  if (!source.isFile() || !isWholeLmdbFile(file)) throw new BackupError(`${file} is not a whole LMDB backup file (cut short, or not LMDB at all)`);
  const made = await mkdir(dataDir, { recursive: true, mode: OWNER_ONLY_DIR });
  try {
    await restoreInto(dataDir, file, options);
  } catch (error) {
    // The backup's format is read from a copy in the data dir: a refused restore leaves no dir it made.
    if (made !== undefined) await removeEmptyDirs(dataDir, made);
    throw error;
  }
}

/** Removes `dir` and its parents up to `top`, each only if empty. */
async function removeEmptyDirs(dir: string, top: string): Promise<void> {
  for (let current = dir; ; current = dirname(current)) {
    if (!(await rmdir(current).then(() => true, () => false)) || current === top) return;
  }
}

async function restoreInto(dataDir: string, file: string, options: { force?: boolean }): Promise<void> {
  // Claimed as a server claims it, for the whole restore: a server started meanwhile would open the data
  // file this restore then replaces, and its acknowledged writes would go to the old one. A CLI command
  // that writes is refused likewise (`markWriter`); one already writing refuses the restore.
  const release = refusing(() => claimDataDir(dataDir, 'restore'));
  // Named after this process: a start that finds it left by a killed restore removes it (server-claim.ts).
  const staging = join(dataDir, `.restore-${process.pid}`);
  try {
    const writer = writingProcess(dataDir);
    if (writer !== undefined) throw new BackupError(`${dataDir} is being written by process ${writer} (a CLI command); try again once it is done`);
    if (!options.force && (await dataEntries(dataDir)).length > 0) {
      throw new BackupError(`${dataDir} is not empty; pass --force to replace its data (stop the server first)`);
    }
    await mkdir(staging, { recursive: true });
    await copyFile(file, join(staging, DATA_FILE));
    ownerOnlyFile(join(staging, DATA_FILE));
    await syncToDisk(join(staging, DATA_FILE));
    await checkBackup(staging, file);
    await rm(join(dataDir, LOCK_FILE), { force: true });
    await rename(join(staging, DATA_FILE), join(dataDir, DATA_FILE));
    await syncToDisk(dataDir);
  } finally {
    await rm(staging, { recursive: true, force: true });
    release();
  }
}

/** Claims or marks the data dir, refused (`BackupError`) when a server or a restore holds it. */
function refusing(hold: () => () => void): () => void {
  try {
    return hold();
  } catch (error) {
    if (error instanceof DataDirInUse) throw new BackupError(error.message);
    throw error;
  }
}

/**
 * Flushes a file, or a directory's entries (a rename), to disk: "FILE is either absent or complete"
 * must hold across a power cut too, not only a crash of this process.
 */
async function syncToDisk(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Entries of a data dir that hold data: not dotfiles (a checkout's `data/.gitkeep`), its claim (the
 * restore's own: it took over one a restore or a server start killed before it wrote any data leaves),
 * LMDB's lock file, nor an empty data file (`holdsData`: a first start killed before LMDB wrote it
 * leaves one, beside a lock file). None when the dir is absent.
 */
async function dataEntries(dataDir: string): Promise<string[]> {
  const names = await readdir(dataDir).catch(() => [] as string[]);
  const noData = new Set([CLAIM_FILE, LOCK_FILE, ...(holdsData(dataDir) ? [] : [DATA_FILE])]);
  return names.filter((name) => !name.startsWith('.') && !noData.has(name));
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
