/** A `\u` escape of a surrogate: only JSON text holding one can parse into a string with half a UTF-16 pair. */
const ESCAPED_SURROGATE = /\\u[dD][89a-fA-F]/;
/** Half of a UTF-16 pair standing alone: with the `u` flag a whole pair is one code point, which never matches. */
const LONE_SURROGATE = /\p{Cs}/u;
const LONE_SURROGATES = /\p{Cs}/gu;

export interface LoneSurrogate {
  /** Keys and indexes down to the string or key that holds it; a key that holds it comes last, with it written `\uXXXX`. */
  path: Array<string | number>;
  problem: string;
}

const escaped = (unit: string) => `\\u${unit.charCodeAt(0).toString(16)}`;
const described = (unit: string) => `a lone surrogate ${escaped(unit)} (half of a UTF-16 pair): text must be well-formed Unicode`;

/**
 * A key or string of `value`, parsed from the JSON `text`, that holds a lone surrogate: no UTF-8 can
 * hold one, so stored it would come back as something else than was sent. The value is walked only
 * when the text escapes a surrogate; any other text costs one scan.
 */
export function findLoneSurrogate(text: string, value: unknown): LoneSurrogate | undefined {
  if (!ESCAPED_SURROGATE.test(text)) return undefined;
  const pending: Array<[unknown, Array<string | number>]> = [[value, []]];
  while (pending.length > 0) {
    const [next, path] = pending.pop()!;
    if (typeof next === 'string') {
      const lone = LONE_SURROGATE.exec(next);
      if (lone) return { path, problem: `has ${described(lone[0])}` };
    } else if (Array.isArray(next)) {
      next.forEach((child, index) => pending.push([child, [...path, index]]));
    } else if (typeof next === 'object' && next !== null) {
      for (const [key, child] of Object.entries(next)) {
        const lone = LONE_SURROGATE.exec(key);
        if (lone) return { path: [...path, key.replace(LONE_SURROGATES, escaped)], problem: `the key has ${described(lone[0])}` };
        pending.push([child, [...path, key]]);
      }
    }
  }
  return undefined;
}
