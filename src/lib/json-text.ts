import { isUtf8 } from 'node:buffer';
import { findLoneSurrogate, type LoneSurrogate } from './lone-surrogates.js';

/** How deep JSON arrays and objects may nest in a body: deeper values are refused before anything walks them. */
const MAX_JSON_DEPTH = 64;

/** JSON parsed; or why it cannot be read; or where it holds a lone surrogate (JSON allows one, no UTF-8 can store it). */
export type JsonRead = { value: unknown } | { problem: string } | { loneSurrogate: LoneSurrogate };

/** JSON text (RFC 8259: UTF-8) parsed, or why it cannot be: not UTF-8, or as `readJsonString` says. */
export function readJsonText(raw: Buffer): JsonRead {
  return isUtf8(raw) ? readJsonString(raw.toString('utf8')) : { problem: 'not UTF-8' };
}

/**
 * JSON parsed from text already decoded, or why it cannot be: malformed, nested past `MAX_JSON_DEPTH`,
 * holding a number past a double's range, naming a key of an object twice, or with a lone surrogate.
 */
export function readJsonString(text: string): JsonRead {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: withoutQuotedText((error as Error).message) };
  }
  const { problem, keys } = inspected(value);
  if (problem) return { problem };
  if (keys !== keysWritten(text)) return { problem: REPEATED_KEY };
  const loneSurrogate = findLoneSurrogate(text, value);
  return loneSurrogate ? { loneSurrogate } : { value };
}

/**
 * V8 quotes up to ten characters of the body around a bad token (`Unexpected token 's', ..."a": secret"...
 * is not valid JSON`): dropped, since a body may hold a secret the answer or a proxy's log should not repeat.
 */
function withoutQuotedText(message: string): string {
  return message.replace(/, (\.\.\.)?".*"(\.\.\.)? is not valid JSON$/s, ' in JSON');
}

const TOO_DEEP = `arrays and objects nest at most ${MAX_JSON_DEPTH} levels deep`;
/** JSON.parse reads such a number as ±Infinity, which JSON writes back as null: it could not be kept as sent. */
const OUT_OF_RANGE = 'a number is beyond the range of a double (about ±1.8e308)';

/**
 * JSON.parse keeps the last of an object's repeated keys, silently; another reader (a proxy, a WAF)
 * may keep the first, so which copy counts would be a guess, as for a repeated header or form field.
 */
const REPEATED_KEY = 'an object names a key more than once';
/**
 * How many object keys valid JSON `text` writes: more than its parsed value holds when a key is
 * repeated. In valid JSON every `"` outside a string opens one, and a key is a string followed by `:`.
 * A scan with `indexOf` (about 1.2 µs for a profile of 700 bytes, a regex's `matchAll` 2.8): every
 * write's body goes through it.
 */
function keysWritten(text: string): number {
  let keys = 0;
  for (let open = text.indexOf('"'); open !== -1; open = text.indexOf('"', open + 1)) {
    let close = text.indexOf('"', open + 1);
    while (isEscaped(text, close)) close = text.indexOf('"', close + 1);
    let next = close + 1;
    while (isJsonSpace(text.charCodeAt(next))) next++;
    if (text.charCodeAt(next) === COLON) keys++;
    open = close;
  }
  return keys;
}

const COLON = 0x3a;
const BACKSLASH = 0x5c;

/** Whether the character at `at` follows an odd run of backslashes. */
function isEscaped(text: string, at: number): boolean {
  let backslashes = 0;
  while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
  return backslashes % 2 === 1;
}

const isJsonSpace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

/**
 * How many object keys a parsed value holds, or why it cannot be taken: arrays and objects nested
 * deeper than `MAX_JSON_DEPTH`, or a number out of range; iterative, so no depth can overflow the stack.
 */
function inspected(value: unknown): { problem?: string; keys: number } {
  if (typeof value === 'number' && !Number.isFinite(value)) return { problem: OUT_OF_RANGE, keys: 0 };
  let keys = 0;
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [next, depth] = pending.pop()!;
    if (typeof next !== 'object' || next === null) continue;
    if (depth > MAX_JSON_DEPTH) return { problem: TOO_DEEP, keys };
    const children = Array.isArray(next) ? next : Object.values(next);
    if (!Array.isArray(next)) keys += children.length;
    for (const child of children) {
      if (typeof child === 'object' && child !== null) pending.push([child, depth + 1]);
      else if (typeof child === 'number' && !Number.isFinite(child)) return { problem: OUT_OF_RANGE, keys };
    }
  }
  return { keys };
}
