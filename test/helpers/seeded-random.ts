import { crc32 } from 'node:zlib';

/** mulberry32: a small PRNG whose sequence in [0, 1) depends on its seed alone, so a failing run can be replayed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = Math.imul(state ^ (state >>> 15), state | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` of `items` drawn without repeats by `random` (a Fisher–Yates shuffle of a copy). */
export function drawn<T>(random: () => number, items: readonly T[], count: number): T[] {
  const pool = [...items];
  for (let i = pool.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  return pool.slice(0, count);
}

/** A stream of its own for `label` under `seed`: the same label draws the same values, whatever else was drawn before. */
export const labelledRandom = (seed: number, label: string) => seededRandom(seed ^ crc32(label));
