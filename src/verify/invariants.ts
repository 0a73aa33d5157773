import type { Deps } from '../deps.js';
import type { Database, Key } from '../storage/store.js';

/** One rule the stored data must satisfy; answers the problems found (empty when it holds). */
export interface Invariant {
  name: string;
  check(deps: Deps): string[];
}

/** How many entries of `db` start with each first key element (the application ID, for most tables). */
function countByFirstKey(db: Database<unknown, Key>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of db.getKeys({})) {
    const first = String((key as Key[])[0]);
    counts.set(first, (counts.get(first) ?? 0) + 1);
  }
  return counts;
}

/** A maintained counter per application must equal a recount of its table. */
export function counterMatchesRecount(
  deps: Deps,
  label: string,
  table: Database<unknown, Key>,
  counterKey: (appId: string) => Key,
): string[] {
  const problems: string[] = [];
  const recount = countByFirstKey(table);
  const appIds = new Set([...recount.keys(), ...deps.apps.list().map((app) => app.id)]);
  for (const appId of appIds) {
    const counted = deps.runtime.counter(counterKey(appId));
    const actual = recount.get(appId) ?? 0;
    if (counted !== actual) problems.push(`${label} of ${appId}: counter says ${counted}, recount finds ${actual}`);
  }
  return problems;
}

export interface VerifyReport {
  checked: string[];
  problems: string[];
}

export function verifyStore(deps: Deps, invariants: readonly Invariant[]): VerifyReport {
  const problems: string[] = [];
  for (const invariant of invariants) {
    let found: string[];
    try {
      found = invariant.check(deps);
    } catch (error) {
      // A record the check cannot read (reported by its own check too) must not hide what the others find.
      // The error's message is left out: it may quote what the record holds.
      found = [`could not finish (${(error as Error).name}): a record it reads is unreadable`];
    }
    for (const problem of found) problems.push(`${invariant.name}: ${problem}`);
  }
  return { checked: invariants.map((i) => i.name), problems };
}
