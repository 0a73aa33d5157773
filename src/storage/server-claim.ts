import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The file that names the server process serving a data dir. LMDB lets many processes share an
 * environment (the CLI does, beside a server), but two servers would each keep their own actors and
 * locks in memory and overwrite each other's acknowledged writes.
 */
const CLAIM_FILE = 'server.pid';

class DataDirInUse extends Error {}

/** The process that claims `dataDir`, if it is still alive. */
export function servingProcess(dataDir: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dataDir, CLAIM_FILE), 'utf8'));
  } catch {
    return undefined;
  }
  return Number.isSafeInteger(pid) && pid > 0 && isAlive(pid) ? pid : undefined;
}

/**
 * Claims `dataDir` (which must exist) for this process, or throws `DataDirInUse` when a live
 * process holds it. The claim of a process that died without releasing it (`kill -9`) is taken
 * over. Answers the release, for a clean shutdown.
 */
export function claimDataDir(dataDir: string): () => void {
  const path = join(dataDir, CLAIM_FILE);
  for (;;) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        if (servingProcess(dataDir) === process.pid) unlinkSync(path);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = servingProcess(dataDir);
      // Our own PID names a process that died before us: a container's PID 1 gets the same PID each start.
      if (holder !== undefined && holder !== process.pid) {
        throw new DataDirInUse(`${dataDir} is served by process ${holder}; stop it first (or remove ${path} if no server runs)`);
      }
      unlinkSync(path);
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
