import { unavailable } from '../../lib/errors.js';
import type { ActorRuntime, Turn } from '../../runtime/runtime.js';

/** Thrown by a turn body that found it must hold more locks; the turn has written nothing yet. */
class MissingLocks extends Error {
  constructor(readonly keys: string[]) {
    super('The turn needs more locks');
  }
}

/** Asserts the turn holds `keys`; when it does not, the turn is run again holding them as well. */
export type Hold = (keys: readonly string[]) => void;

const MAX_ATTEMPTS = 5;

/** A turn's locks, or what names them before each attempt (see `runHolding`). */
export type Locks = readonly string[] | (() => readonly string[]);

/** The keys `locks` names for the attempt about to run. */
export const lockKeysOf = (locks: Locks): readonly string[] => (typeof locks === 'function' ? locks() : locks);

/**
 * Runs a turn whose lock set depends on what it finds (a group's members, the member of an
 * invite): the body calls `hold` before touching anything it did not know of beforehand, and a
 * refused attempt is repeated with the bigger set. Nothing is committed by an attempt that asks.
 * A turn that makes new records draws their IDs in `locks`, once per attempt: an attempt queued
 * again behind turns that overtook it gets IDs after theirs, so a list paged by ID never shows it
 * before an item committed earlier (a client holding that item as its cursor would skip it).
 */
export async function runHolding<T>(runtime: ActorRuntime, locks: Locks, body: (turn: Turn, hold: Hold) => T): Promise<T> {
  const learned = new Set<string>();
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const held = new Set([...lockKeysOf(locks), ...learned]);
    try {
      return await runtime.run([...held], (turn) =>
        body(turn, (keys) => {
          const missing = keys.filter((key) => !held.has(key));
          if (missing.length > 0) throw new MissingLocks(missing);
        }),
      );
    } catch (error) {
      if (!(error instanceof MissingLocks)) throw error;
      for (const key of error.keys) learned.add(key);
    }
  }
  throw unavailable('The group is changing too fast; try again');
}

/**
 * The hold of a turn whose lock set is fixed (a link's redemption, a group's creation): a key outside
 * `held` means that set was named wrong, a bug to surface at once, not a turn to repeat.
 */
export const fixedHold =
  (held: readonly string[]): Hold =>
  (keys) => {
    const missing = keys.filter((key) => !held.includes(key));
    if (missing.length > 0) throw new TypeError(`The turn needs ${missing.join(', ')}, which it did not lock up front`);
  };
