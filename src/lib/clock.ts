/** Time source passed through deps so tests can move time without sleeping. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export const isoDate = (ms: number) => new Date(ms).toISOString();

/** A clock that only moves when told: for tests. */
export function manualClock(start = Date.parse('2026-01-01T00:00:00Z')) {
  let current = start;
  return {
    now: () => current,
    advance(ms: number) {
      current += ms;
    },
    set(ms: number) {
      current = ms;
    },
  };
}
