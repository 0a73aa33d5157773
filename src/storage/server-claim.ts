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

/** The live process that claims `dataDir`, and what for. */
const liveClaim = (dataDir: string) => liveHolder(linesOf(join(dataDir, CLAIM_FILE)));

/** The live process that the lines of a claim name, and what for: a restore's claim says so on its third line; a server's has none (as an older build's). */
function liveHolder(lines: string[]): { pid: number; holder: ClaimHolder } | undefined {
  const pid = liveProcess(lines);
  return pid === undefined ? undefined : { pid, holder: lines[2] === 'restore' ? 'restore' : 'server' };
}

/** The lines of `file`; none when it cannot be read (gone since it was seen). */
function linesOf(file: string): string[] {
  return linesIfThere(file) ?? [];
}

/** The lines of `file`; undefined when it is gone, none when it cannot be read otherwise. */
function linesIfThere(file: string): string[] | undefined {
  try {
    return readFileSync(file, 'utf8').split('\n');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : [];
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
    const giveUpAt = Date.now() + TAKEOVER_PATIENCE_MS;
    for (;;) {
      try {
        linkSync(draft, path);
        removeLeftovers(dataDir);
        return () => {
          if (servingProcess(dataDir) === process.pid) unlinkSync(path);
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const rival = removeLeftoverClaim(dataDir, draft);
      if (rival === undefined) continue;
      if (Date.now() > giveUpAt) throw new DataDirInUse(`${dataDir} is being claimed by process ${rival} too; try again`);
      // At random: two that keep meeting at the same pace would never stop.
      pause(1 + Math.random() * 10);
    }
  } finally {
    rmSync(draft, { force: true });
  }
}

/** How long a start waits for other processes taking over a leftover claim beside it: each takes microseconds. */
const TAKEOVER_PATIENCE_MS = 2000;

/** The file a process makes in a data dir while it takes over a leftover claim (`removeLeftoverClaim`). */
const TAKEOVER_TURN = /^\.takeover-(\d+)$/;

/**
 * Removes the claim in `dataDir` if it is a leftover, one process at a time, or throws
 * `DataDirInUse` when a live process holds it. A claim is only ever removed so: of two starts that
 * both judged a leftover, the second would otherwise remove the claim the first has made since.
 * Each process says it takes its turn (`.takeover-<pid>`, linked whole from its `draft`) before it
 * looks for others doing so, and backs off when it finds one: of two that start together, one sees
 * the other. Answers the other live process taking its turn, when this one backed off.
 */
function removeLeftoverClaim(dataDir: string, draft: string): number | undefined {
  const turn = join(dataDir, `.takeover-${process.pid}`);
  // One of this PID's is the leftover of a process that had it before (a container's PID 1).
  rmSync(turn, { force: true });
  linkSync(draft, turn);
  try {
    const rival = liveMarker(dataDir, TAKEOVER_TURN);
    if (rival !== undefined) return rival;
    const path = join(dataDir, CLAIM_FILE);
    const lines = linesIfThere(path);
    // Released since this process found it: its next link may succeed.
    if (lines === undefined) return undefined;
    const claim = liveHolder(lines);
    // Our own PID names a process that died before us: a container's PID 1 gets the same PID each start.
    if (claim !== undefined && claim.pid !== process.pid) {
      throw new DataDirInUse(
        claim.holder === 'restore'
          ? beingRestored(dataDir, claim.pid)
          : `${dataDir} is served by process ${claim.pid}; stop it first (or remove ${path} if no server runs)`,
      );
    }
    // Still the leftover read: no other process removes a claim while this one takes its turn, and none links one while it is there.
    unlinkSync(path);
    return undefined;
  } finally {
    rmSync(turn, { force: true });
  }
}

/** Blocks this thread for `ms`: a start has nothing else to do meanwhile. */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
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
export const writingProcess = (dataDir: string): number | undefined => liveMarker(dataDir, WRITER_MARK);

/** A live process other than this one that the lines of a file in `dataDir` whose name `marker` matches name, if any. */
function liveMarker(dataDir: string, marker: RegExp): number | undefined {
  for (const name of readdirSync(dataDir)) {
    if (!marker.test(name)) continue;
    const pid = liveProcess(linesOf(join(dataDir, name)));
    if (pid !== undefined && pid !== process.pid) return pid;
  }
  return undefined;
}

/**
 * Working copies a process names after its PID in a data dir: a claim's draft, its turn to take over a
 * leftover claim, a writer's mark, and a restore's staging copy (`.restore-<pid>`, see storage/backup.ts),
 * which can be as large as the data.
 */
const WORKING_COPY = /^\.(?:server\.pid\.|takeover-|writer-|restore-)(\d+)$/;

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
