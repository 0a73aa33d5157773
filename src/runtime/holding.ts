import { unavailable } from '../lib/errors.js';
import type { ActorRuntime, Turn } from './runtime.js';

/** Thrown by a turn body that found it must hold more locks; the turn has written nothing yet. */
class MissingLocks extends Error {
  constructor(readonly keys: string[]) {
    super('The turn needs more locks');
  }
}

/** Asserts the turn holds `keys`; when it does not, the turn is run again holding them as well. */
export type Hold = (keys: readonly string[]) => void;

const MAX_ATTEMPTS = 5;

/**
 * Runs a turn whose lock set depends on what it finds (a group's members, the member of an
 * invite, the user an address names): the body calls `hold` before touching anything it did not
 * know of beforehand, and a refused attempt is repeated with the bigger set. Nothing is committed by
 * an attempt that asks. A turn that makes new records draws their IDs inside it (`Turn.lockNew`), so
 * each attempt draws anew. After `MAX_ATTEMPTS` it answers 503 with `busy`: what kept changing.
 */
export async function runHolding<T>(
  runtime: ActorRuntime,
  locks: readonly string[],
  body: (turn: Turn, hold: Hold) => T,
  busy: string,
): Promise<T> {
  const held = new Set(locks);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    try {
      return await runtime.run([...held], (turn) =>
        body(turn, (keys) => {
          const missing = keys.filter((key) => !turn.holds(key));
          if (missing.length > 0) throw new MissingLocks(missing);
        }),
      );
    } catch (error) {
      if (!(error instanceof MissingLocks)) throw error;
      for (const key of error.keys) held.add(key);
    }
  }
  throw unavailable(busy);
}

/**
 * The hold of a turn whose lock set is fixed (a link's redemption, a group's creation): a key the turn
 * does not hold means that set was named wrong, a bug to surface at once, not a turn to repeat.
 */
export const fixedHold =
  (turn: Turn): Hold =>
  (keys) => {
    const missing = keys.filter((key) => !turn.holds(key));
    if (missing.length > 0) throw new TypeError(`The turn needs ${missing.join(', ')}, which it did not lock up front`);
  };
