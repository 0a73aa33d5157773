import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from './storage/store.js';
import { FORMAT_VERSION, storedFormatVersion } from './storage/migrations.js';

/** The child's entry: opening the services moves the data dir to this build's format. */
const UPGRADE_ENTRY = fileURLToPath(new URL('./format-upgrade-main.js', import.meta.url));

/**
 * Moves a data dir of an older format to this build's in a child process, before the server opens
 * it. A step is one transaction over every user, and LMDB keeps the memory that transaction's pages
 * took (~0.6 GB for 200 000 users, ~0.9 GB for a million) until its process ends: a server that
 * migrated itself would carry it for as long as it runs. The child inherits the server's output.
 */
export async function upgradeFormatApart(dataDir: string): Promise<void> {
  if (!(await isFormatBehind(dataDir))) return;
  const child = spawn(process.execPath, [...process.execArgv, UPGRADE_ENTRY], { stdio: 'inherit', env: process.env });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
  });
  if (code !== 0) throw new Error(`The data format upgrade of ${dataDir} failed (${signal ? `signal ${signal}` : `exit ${code}`}); it keeps its format`);
}

/** Whether `dataDir` holds data of a format older than this build's (a newer one is refused at open). */
async function isFormatBehind(dataDir: string): Promise<boolean> {
  if (!existsSync(join(dataDir, 'data.mdb'))) return false;
  const store = openStore(dataDir, { readOnly: true });
  try {
    const version = storedFormatVersion(store);
    return version !== undefined && version < FORMAT_VERSION;
  } finally {
    await store.close();
  }
}
