import { readFileSync } from 'node:fs';

/** Whether process `pid` has ended but not been reaped by its parent (state `Z` in `/proc/<pid>/stat`). */
export const isZombie = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
};

/** Whether process `pid` runs: it exists and has not ended (a reparented child nothing reaps is left a zombie). */
export const isRunning = (pid: number) => {
  try {
    return !isZombie(pid);
  } catch {
    return false;
  }
};
