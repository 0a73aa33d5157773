import * as v from 'valibot';
import { addFieldError, shownKey, validationError, type FieldErrors } from './errors.js';
import type { RequestContext } from '../http/context.js';

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `schema` behind a check that the value is a JSON object: valibot's objects and records also take arrays. */
export const jsonObject = <S extends v.GenericSchema>(schema: S, message = 'must be an object') =>
  v.pipe(v.custom<unknown>(isPlainObject, message), schema);

/** Keys valibot's records and loose objects leave out of their output without an issue (its guard against prototype pollution). */
const DROPPED_KEYS = ['__proto__', 'prototype', 'constructor'];

/** Whether a key `__proto__` lies anywhere inside a JSON value: msgpack, as values are stored, reads it back as `__proto_`. */
const holdsProtoKey = (value: unknown): boolean =>
  Array.isArray(value)
    ? value.some(holdsProtoKey)
    : isPlainObject(value) && Object.entries(value).some(([key, inner]) => key === '__proto__' || holdsProtoKey(inner));

/**
 * `jsonObject` for a record or a loose object, which keep the keys given: one valibot would drop unsaid
 * is refused instead, and so is a `__proto__` inside its values, which would be stored renamed.
 */
export const jsonRecord = <S extends v.GenericSchema>(schema: S, message = 'must be an object') =>
  jsonObject(
    v.pipe(
      v.custom<unknown>((object) => !DROPPED_KEYS.some((key) => Object.hasOwn(object as object, key)), `may not use ${DROPPED_KEYS.join(', ')} as keys`),
      v.custom<unknown>((object) => !Object.values(object as object).some(holdsProtoKey), 'may not hold a key __proto__ inside its values'),
      schema,
    ),
    message,
  );

/**
 * `body` that also takes the read-only fields its resource is read with (`readOnly`), whatever their
 * values, and drops them: a body read from a GET can be edited and sent back as a PUT. Any other key
 * it does not name stays unknown (400).
 */
export function takingReadOnly<E extends v.ObjectEntries, M extends v.ErrorMessage<v.StrictObjectIssue> | undefined>(
  body: v.StrictObjectSchema<E, M>,
  readOnly: readonly string[],
) {
  const ignored = Object.fromEntries(readOnly.map((name) => [name, v.optional(v.unknown())]));
  return v.pipe(
    v.strictObject({ ...ignored, ...body.entries }, body.message),
    v.transform((input) => Object.fromEntries(Object.entries(input).filter(([key]) => !readOnly.includes(key))) as v.InferOutput<typeof body>),
  );
}

/**
 * A character that makes a name a person reads show otherwise than it is written: a control character
 * (C0, DEL, C1), a bidirectional control (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069: a
 * name shown reversed, the "Trojan Source" trick) or a line or paragraph separator (U+2028, U+2029).
 */
const MISLEADING_CHARACTER = /[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\u2028\u2029]/u;

export const holdsMisleadingCharacter = (name: string) => MISLEADING_CHARACTER.test(name);

/** Words for a name refused by holdsMisleadingCharacter. */
export const MISLEADING_CHARACTERS_REFUSED = 'must not contain control characters, bidirectional controls or line separators';

/** No MISLEADING_CHARACTER, refused in words that begin with `subject` where the schema's messages name their field. */
export const noMisleadingCharacters = (subject?: string) =>
  v.check((text: string) => !holdsMisleadingCharacter(text), subject ? `${subject} ${MISLEADING_CHARACTERS_REFUSED}` : MISLEADING_CHARACTERS_REFUSED);

/** For names shown in lists and pages (groups, apps, OIDC clients): one line of text, no MISLEADING_CHARACTER. */
export const NO_MISLEADING_CHARACTERS = noMisleadingCharacters();

/**
 * Whether `text` is at most `max` characters, counted as people count them (Unicode code points), not
 * as JavaScript's `length` does (UTF-16 units: an emoji is two). Counted only past `max` units.
 */
export function fitsCharacters(text: string, max: number): boolean {
  if (text.length <= max) return true;
  let count = 0;
  for (const _ of text) if (++count > max) return false;
  return true;
}

/** `v.maxLength` in characters (`fitsCharacters`), for text a person writes: names, titles, descriptions. */
export const maxCharacters = (max: number, message: string) => v.check((text: string) => fitsCharacters(text, max), message);

type TextSays = { notText?: string; empty: string; tooLong: string };

/** Text, trimmed, of 1 to `max` characters: the shape of a name, which one stored before MISLEADING_CHARACTER was refused has too. */
export const trimmedText = (max: number, says: TextSays) =>
  v.pipe(v.string(says.notText), v.trim(), v.minLength(1, says.empty), maxCharacters(max, says.tooLong));

/**
 * One line of text, trimmed, of 1 to `max` characters and no MISLEADING_CHARACTER: the rule of names
 * (groups, apps, OIDC clients) and roles. `says` words each refusal for the field it checks.
 */
export const oneLineOfText = (max: number, says: TextSays) => v.pipe(trimmedText(max, says), NO_MISLEADING_CHARACTERS);

/** `config.redirect_uris[1]`: where a value lies, written the way a caller writes it; `body` for the whole input. */
export function shownPath(keys: readonly unknown[]): string {
  let path = '';
  for (const key of keys) {
    const name = shownKey(String(key));
    if (typeof key === 'number') path += `[${key}]`;
    else path += path === '' ? name : `.${name}`;
  }
  return path === '' ? 'body' : path;
}

const issuePath = (issue: v.BaseIssue<unknown>) => shownPath(issue.path?.map(({ key }) => key) ?? []);

/** The issue in words a caller reads: valibot's own wording for missing, unknown and mistyped values is about its schema. */
function issueMessage(issue: v.BaseIssue<unknown>): string {
  if (issue.message.startsWith('Invalid key:')) return issue.expected === 'never' ? 'is not a known field' : 'is required';
  if (issue.message.startsWith('Invalid type:')) {
    return issue.received === 'undefined' ? 'is required' : `must be ${issue.expected}, not ${shownReceived(issue.received)}`;
  }
  return issue.message;
}

/** valibot's text of a mistyped value (a string in quotes), a string shown as `shownKey` shows one: a secret pasted in the wrong place is not echoed. */
const shownReceived = (received: string) =>
  received.length > 1 && received.startsWith('"') && received.endsWith('"') ? `"${shownKey(received.slice(1, -1))}"` : received;

/** valibot issues as ADDENDUM §7 `field_errors`, keyed by the path of the offending value. */
export function fieldErrorsOf(issues: readonly v.BaseIssue<unknown>[]): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of issues) addFieldError(errors, issuePath(issue), issueMessage(issue));
  return errors;
}

/** `input` checked against `schema`, or 400 `E_VALIDATION` with `field_errors`. */
export function parseInput<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (!result.success) throw validationError(fieldErrorsOf(result.issues));
  return result.output;
}

/**
 * The request's JSON body (or the fields of a form body, which only a route accepting forms is
 * handed) checked against `schema`; a missing body counts as `{}`.
 */
export function parseJsonBody<S extends v.GenericSchema>(ctx: RequestContext, schema: S): v.InferOutput<S> {
  const { body } = ctx;
  // valibot's objects take arrays (`[]` would pass as `{}`): a body is a JSON object or nothing.
  if (body.kind === 'json' && !isPlainObject(body.value)) throw validationError({ body: ['must be a JSON object'] });
  return parseInput(schema, body.kind === 'json' ? body.value : body.kind === 'form' ? body.fields : {});
}

/** Nothing at all: for a body or a query string that carries nothing, yet refuses what is given rather than ignore it. */
export const NO_FIELDS = v.strictObject({});

/** For a route whose body carries nothing: none, or `{}`; anything else is 400 rather than ignored. */
export function expectNoFields(ctx: RequestContext): void {
  parseJsonBody(ctx, NO_FIELDS);
}

/**
 * The query string as one value per name (a repeated name is a 400), checked against `schema`;
 * names in `parsedElsewhere` are left to another parser.
 */
export function parseQuery<S extends v.GenericSchema>(
  ctx: RequestContext,
  schema: S,
  parsedElsewhere: ReadonlySet<string> = new Set(),
): v.InferOutput<S> {
  const values = new Map<string, string>();
  for (const [name, value] of ctx.query()) {
    if (parsedElsewhere.has(name)) continue;
    if (values.has(name)) throw validationError({ [shownKey(name)]: ['must be given once'] });
    values.set(name, value);
  }
  // fromEntries defines own properties: a parameter named __proto__ is one the schema refuses.
  return parseInput(schema, Object.fromEntries(values));
}
