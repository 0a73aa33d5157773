import { linkSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OWNER_ONLY_FILE } from './store.js';

/**
 * The file that names the server process serving a data dir. LMDB lets many processes share an
 * environment (the CLI does, beside a server), but two servers would each keep their own actors and
 * locks in memory and overwrite each other's acknowledged writes.
 *
 * Its first line is the PID; its second, where `/proc` tells it, the process's identity (`identityOf`),
 * so that a PID another process has taken since (after a reboot, PIDs start over) is not mistaken
 * for the server that wrote the claim. A restore claims the data dir too, for as long as it runs, and
 * says so on a third line (`restore`).
 */
export const CLAIM_FILE = 'server.pid';

export class DataDirInUse extends Error {}

/** Who holds a claim: a server, or a restore (which replaces the data file when it is done). */
export type ClaimHolder = 'server' | 'restore';

/** The process that claims `dataDir`, if it is still alive. */
export const servingProcess = (dataDir: string): number | undefined => liveClaim(dataDir)?.pid;

/** The process restoring `dataDir`, if it is still alive. */
export function restoringProcess(dataDir: string): number | undefined {
  const claim = liveClaim(dataDir);
  return claim?.holder === 'restore' ? claim.pid : undefined;
}

/** A restore's claim says so on its third line; a server's has none (as an older build's). */
function liveClaim(dataDir: string): { pid: number; holder: ClaimHolder } | undefined {
  const lines = linesOf(join(dataDir, CLAIM_FILE));
  const pid = liveProcess(lines);
  return pid === undefined ? undefined : { pid, holder: lines[2] === 'restore' ? 'restore' : 'server' };
}

/** The lines of `file`; none when it cannot be read (gone since it was seen). */
function linesOf(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n');
  } catch {
    return [];
  }
}

/** The lines that name this process in a claim or a writer's mark: its PID, and its identity where `/proc` tells it. */
const processLines = () => [String(process.pid), identityOf(process.pid) ?? ''];

/** The live process that the lines of a claim or a writer's mark name, if any. */
function liveProcess(lines: string[]): number | undefined {
  const pid = Number(lines[0]);
  if (!Number.isSafeInteger(pid) || pid <= 0 || !isAlive(pid)) return undefined;
  const claimed = lines[1];
  // A claim without an identity (written by an older build, or where there is no `/proc`), or a
  // process whose identity cannot be read (`/proc` mounted with `hidepid`), is trusted by its PID.
  const current = claimed ? identityOf(pid) : undefined;
  return current === undefined || current === claimed ? pid : undefined;
}

const beingRestored = (dataDir: string, pid: number) => `${dataDir} is being restored by process ${pid}; try again once it is done`;

/**
 * Claims `dataDir` (which must exist) for this process, or throws `DataDirInUse` when a live
 * process holds it. The claim of a process that died without releasing it (`kill -9`) is taken
 * over. Answers the release, for a clean shutdown.
 */
export function claimDataDir(dataDir: string, holder: ClaimHolder = 'server'): () => void {
  const path = join(dataDir, CLAIM_FILE);
  // Written whole, then linked into place: a claim seen empty or cut short is a leftover that a start
  // beside this one would take over. A dotfile, which `restore` does not count as data.
  const draft = join(dataDir, `.${CLAIM_FILE}.${process.pid}`);
  const lines = holder === 'restore' ? [...processLines(), 'restore'] : processLines();
  writeFileSync(draft, `${lines.join('\n')}\n`);
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
        const claim = liveClaim(dataDir);
        // Our own PID names a process that died before us: a container's PID 1 gets the same PID each start.
        if (claim !== undefined && claim.pid !== process.pid) {
          throw new DataDirInUse(
            claim.holder === 'restore'
              ? beingRestored(dataDir, claim.pid)
              : `${dataDir} is served by process ${claim.pid}; stop it first (or remove ${path} if no server runs)`,
          );
        }
        unlinkSync(path);
      }
    }
  } finally {
    rmSync(draft, { force: true });
  }
}

/** A CLI process that writes to a data dir, or opens it for a backup or `verify`, marks it so, beside a server's claim (`markWriter`). */
const WRITER_MARK = /^\.writer-(\d+)$/;

/**
 * Marks `dataDir` (which must exist) as written by this process until the answered release, or
 * throws `DataDirInUse` while a restore holds it: the restore would replace the data file under the
 * write, which would be lost. The mark is made before the claim is read, and a restore claims before
 * it looks for marks (`writingProcess`): of a write and a restore that start together, one sees the other.
 */
export function markWriter(dataDir: string): () => void {
  const mark = join(dataDir, `.writer-${process.pid}`);
  writeFileSync(mark, `${processLines().join('\n')}\n`, { mode: OWNER_ONLY_FILE });
  const release = () => rmSync(mark, { force: true });
  const restoring = restoringProcess(dataDir);
  if (restoring !== undefined) {
    release();
    throw new DataDirInUse(beingRestored(dataDir, restoring));
  }
  return release;
}

/** A live process other than this one that marked `dataDir` as written (`markWriter`), if any. */
export function writingProcess(dataDir: string): number | undefined {
  for (const name of readdirSync(dataDir)) {
    if (!WRITER_MARK.test(name)) continue;
    const pid = liveProcess(linesOf(join(dataDir, name)));
    if (pid !== undefined && pid !== process.pid) return pid;
  }
  return undefined;
}

/**
 * Working copies a process names after its PID in a data dir: a claim's draft, a writer's mark, and a
 * restore's staging copy (`.restore-<pid>`, see storage/backup.ts), which can be as large as the data.
 */
const WORKING_COPY = /^\.(?:server\.pid\.|writer-|restore-)(\d+)$/;

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
