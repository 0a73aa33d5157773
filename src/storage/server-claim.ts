import { linkSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The file that names the server process serving a data dir. LMDB lets many processes share an
 * environment (the CLI does, beside a server), but two servers would each keep their own actors and
 * locks in memory and overwrite each other's acknowledged writes.
 *
 * Its first line is the PID; its second, where `/proc` tells it, the process's identity (`identityOf`),
 * so that a PID another process has taken since (after a reboot, PIDs start over) is not mistaken
 * for the server that wrote the claim.
 */
export const CLAIM_FILE = 'server.pid';

export class DataDirInUse extends Error {}

/** The process that claims `dataDir`, if it is still alive. */
export function servingProcess(dataDir: string): number | undefined {
  let lines: string[];
  try {
    lines = readFileSync(join(dataDir, CLAIM_FILE), 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  if (!Number.isSafeInteger(pid) || pid <= 0 || !isAlive(pid)) return undefined;
  const claimed = lines[1];
  // A claim without an identity (written by an older build, or where there is no `/proc`), or a
  // process whose identity cannot be read (`/proc` mounted with `hidepid`), is trusted by its PID.
  const current = claimed ? identityOf(pid) : undefined;
  return current === undefined || current === claimed ? pid : undefined;
}

/**
 * Claims `dataDir` (which must exist) for this process, or throws `DataDirInUse` when a live
 * process holds it. The claim of a process that died without releasing it (`kill -9`) is taken
 * over. Answers the release, for a clean shutdown.
 */
export function claimDataDir(dataDir: string): () => void {
  const path = join(dataDir, CLAIM_FILE);
  // Written whole, then linked into place: a claim seen empty or cut short is a leftover that a start
  // beside this one would take over. A dotfile, which `restore` does not count as data.
  const draft = join(dataDir, `.${CLAIM_FILE}.${process.pid}`);
  const identity = identityOf(process.pid);
  writeFileSync(draft, identity === undefined ? `${process.pid}\n` : `${process.pid}\n${identity}\n`);
  try {
    for (;;) {
      try {
        linkSync(draft, path);
        removeLeftovers(dataDir);
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
  } finally {
    rmSync(draft, { force: true });
  }
}

/**
 * Working copies a process names after its PID in a data dir: a claim's draft, and a restore's
 * staging copy (`.restore-<pid>`, see storage/backup.ts), which can be as large as the data.
 */
const WORKING_COPY = /^\.(?:server\.pid\.|restore-)(\d+)$/;

/**
 * Removes the working copies in `dir` of processes that are gone (killed while claiming, restoring
 * or backing up): entries whose name `workingCopy` matches with the PID as its first group. Only
 * tidying: one that cannot be removed (another account's) stays, and the caller goes on.
 */
export function removeLeftovers(dir: string, workingCopy = WORKING_COPY): void {
  for (const name of readdirSync(dir)) {
    const pid = Number(workingCopy.exec(name)?.[1]);
    if (!(pid > 0 && pid !== process.pid && !isAlive(pid))) continue;
    try {
      rmSync(join(dir, name), { recursive: true, force: true });
    } catch {}
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

/**
 * What tells a process apart from a later one given the same PID: the boot it runs in and when it
 * started in that boot (clock ticks since boot, which no change of the wall clock moves). Undefined
 * where `/proc` does not tell.
 */
export function identityOf(pid: number): string | undefined {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (2nd field) may hold spaces and parentheses: the start time, the 22nd field,
    // is the 20th after its closing parenthesis.
    const startTicks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    // Named, not bare numbers: a script's `kill $(cat server.pid)` must signal no other process.
    return /^\d+$/.test(startTicks ?? '') ? `boot=${boot} start=${startTicks}` : undefined;
  } catch {
    return undefined;
  }
}
