/**
 * Whether two JSON values (what `JSON.parse` and msgpack decoding make: plain objects, arrays,
 * strings, numbers, booleans, null) are equal, key order aside. A few times cheaper than
 * `util.isDeepStrictEqual`, which also weighs prototypes, symbols and property descriptors: every
 * profile write compares the profile it is given with the stored one.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key) || !jsonEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}
