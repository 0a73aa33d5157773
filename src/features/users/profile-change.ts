import { EMAIL_RULE, isEmailAddress, isPhoneNumber, PHONE_RULE } from './addresses.js';
import { addFieldError, shownKey, validationError, type FieldErrors } from '../../lib/errors.js';
import { jsonEqual } from '../../lib/json-equal.js';
import { fitsCharacters, holdsMisleadingCharacter, MISLEADING_CHARACTERS_REFUSED } from '../../lib/validate.js';
import { dotSegmentRefused, isDotSegment } from '../../lib/urls.js';
import type { AppSchema, FieldSpec } from '../applications/schemas.js';
import type { Attributes, ProfileData } from '../../../machines/user.machine.js';
import { fieldSpec } from '../applications/schemas.js';

/** Who writes: app credentials see and write everything, a user only what the schema allows. */
export type Writer = 'app' | 'user';
/** `replace` (PUT) or `merge` (PATCH, field PUT): a `null` value removes a field or attribute key. */
export type ChangeMode = 'replace' | 'merge';

/** What a profile's `data` holds for an `image`/`file` field; the bytes live in their own db. */
export interface FileDescriptor {
  content_type: string;
  size: number;
  sha256: string;
}

export interface Upload {
  descriptor: FileDescriptor;
  bytes: Buffer;
  /** Checked as a raster image (uploaded to an `image` field): only such bytes are ever shown inline. */
  image?: true;
}

/** A requested change, as parsed from a JSON or multipart body. */
export interface ProfileChange {
  data?: Record<string, unknown>;
  attributes?: Record<string, unknown>;
  /** Uploaded files by field name. */
  files: Record<string, Upload>;
  /**
   * The schema the body was read by, where its reading depends on one (a multipart body's file parts,
   * checked by their field's type, and text parts read by it): a write whose turn finds another
   * schema reads the body again by that one.
   */
  readBy?: AppSchema;
}

/** The app's schema as it is now: a body's reading asks for it only where it depends on it. */
export type SchemaOf = () => AppSchema;

/**
 * Throws every problem of a change found against the committed profile: a multipart body's reading
 * calls it before decoding its images (up to 50 MP each), whose descriptors it does not know yet.
 */
export type Precheck = (change: ProfileChange) => void;

export interface ChangeRules {
  schema: AppSchema;
  writer: Writer;
  mode: ChangeMode;
  /** Undefined for a user whose ID is not drawn yet (a precheck): any `user_id` given is then a change. */
  userId: string | undefined;
  /** `<brand>:`, writable only by the app. */
  reservedNamespace: string;
}

export const STRING_LIMIT = 64 * 1024;
export const PROFILE_LIMIT = 4 * 1024 * 1024;
export const ATTRIBUTE_KEYS_LIMIT = 100;
export const ATTRIBUTE_VALUES_LIMIT = 100;
const FIELD_NAME_LIMIT = 128;
/** A name has no whitespace (and, checked apart, no misleading character). */
const ATTRIBUTE_KEY = /^([A-Za-z0-9_-]{1,64}):(\S{1,128})$/;
/** A data field name no one can read or type: a misleading character (a control character among them), or whitespace only. */
const isUnreadableFieldName = (name: string) => holdsMisleadingCharacter(name) || /^\s*$/.test(name);
const SYSTEM_NAMESPACE = 'system';

export const isFileField = (spec: FieldSpec | undefined) => spec?.type === 'image' || spec?.type === 'file';

/** Whether `writer` may write a field: the app any, a user those the schema lets it. */
export const mayWrite = (writer: Writer, spec: FieldSpec | undefined) => writer === 'app' || spec?.user_writable === true;
export const NOT_WRITABLE = 'not writable by the user';

export const updateFailed = (errors: FieldErrors) =>
  validationError(errors, 'E_USER_UPDATE_FAILED', 'The profile could not be updated');

/**
 * The profile `data` and `attributes` after `change`, checked against the app schema and the
 * writer's rights; throws 400 `E_USER_UPDATE_FAILED` with every problem found.
 */
export function applyProfileChange(
  current: { data: ProfileData; attributes: Attributes },
  change: ProfileChange,
  rules: ChangeRules,
): { data: ProfileData; attributes: Attributes } {
  const errors: FieldErrors = {};
  const complain = (field: string, message: string) => addFieldError(errors, field, message);
  const data = nextData(current.data, change, rules, complain);
  const attributes = nextAttributes(current.attributes, change.attributes, rules, complain);
  if (Object.keys(errors).length > 0) throw updateFailed(errors);
  if (!fitsProfileLimit(data, attributes)) {
    throw updateFailed({ data: [`data and attributes may hold at most ${PROFILE_LIMIT} bytes as JSON`] });
  }
  return { data, attributes };
}

/**
 * Whether `data` and `attributes` together stay within PROFILE_LIMIT as JSON. Merges grow a profile
 * past any one body's cap: its stored record (both bodies) must stay far below 16 MiB.
 */
export const fitsProfileLimit = (data: ProfileData, attributes: Attributes) =>
  Buffer.byteLength(JSON.stringify(data)) + Buffer.byteLength(JSON.stringify(attributes)) <= PROFILE_LIMIT;

type Complain = (field: string, message: string) => void;

/**
 * Whether a user's change names a field it cannot read (a write-only one). Such a write is a change
 * even when it leaves every value as it was: otherwise `meta.modified` standing still would tell the
 * user that the value it sent was the one stored, or that `null` found the field unset.
 */
export function namesUnreadableField(change: ProfileChange, schema: AppSchema, writer: Writer): boolean {
  if (writer === 'app') return false;
  const names = [...Object.keys(change.data ?? {}), ...Object.keys(change.files)];
  return names.some((name) => fieldSpec(schema, name)?.user_readable !== true);
}

function nextData(current: ProfileData, change: ProfileChange, rules: ChangeRules, report: Complain): ProfileData {
  // A field refused has its complaint already: it is not also reported missing. Made on the first
  // complaint: a write that passes (nearly all) allocates nothing for it.
  let refused: Set<string> | undefined;
  const complain: Complain = (name, message) => {
    (refused ??= new Set()).add(name);
    report(shownKey(name), message);
  };
  const { schema, writer, userId } = rules;
  const given = change.data;
  if (given === undefined && Object.keys(change.files).length === 0) return current;
  // Files without `data` (a multipart PUT of just a picture) add to the data rather than replace it.
  const mode = given === undefined ? 'merge' : rules.mode;
  const mayRead = (spec: FieldSpec | undefined) => writer === 'app' || spec?.user_readable === true;
  const next: ProfileData = {};
  // A replace keeps what the writer may not write, and what it cannot read: a user cannot be asked to
  // send back a value it is never shown.
  for (const name in current) {
    const spec = fieldSpec(schema, name);
    if (mode === 'merge' || !mayWrite(writer, spec) || !mayRead(spec)) next[name] = current[name];
  }

  for (const name in given) {
    const value = given[name];
    const spec = fieldSpec(schema, name);
    if (name === 'user_id') {
      if (value !== userId) complain(name, 'user_id cannot be changed');
      continue;
    }
    if (name.length === 0 || !fitsCharacters(name, FIELD_NAME_LIMIT) || name === '__proto__') {
      complain(name, `field names are 1 to ${FIELD_NAME_LIMIT} characters, not __proto__`);
      continue;
    }
    // An unchanged value is no write: a profile read and sent back as is passes. Only for fields the
    // writer can read: elsewhere the difference between "unchanged" and "refused" would tell the value.
    const stored = Object.hasOwn(current, name) ? current[name] : undefined;
    if (mayRead(spec) && (jsonEqual(value, stored) || (value === null && stored === undefined))) {
      if (stored !== undefined) next[name] = stored;
      continue;
    }
    // After the unchanged check, and not for `null`: a name stored before the rule is sent back as read, or removed.
    if (value !== null && isUnreadableFieldName(name)) {
      complain(name, `field names are not whitespace only and ${MISLEADING_CHARACTERS_REFUSED}`);
      continue;
    }
    // A field route could not reach it: `…/data/fields/..` is resolved away before it is sent.
    if (value !== null && isDotSegment(name)) {
      complain(name, dotSegmentRefused('field names are'));
      continue;
    }
    // A field the schema no longer allows may still be removed, one by one.
    if (!spec && !schema.allow_unknown_fields && value !== null) {
      complain(name, 'unknown field: the application schema does not allow unknown fields');
      continue;
    }
    if (!mayWrite(writer, spec)) {
      complain(name, NOT_WRITABLE);
      continue;
    }
    if (value === null) {
      delete next[name];
      continue;
    }
    if (isFileField(spec)) {
      if (!Object.hasOwn(change.files, name)) {
        complain(name, `upload the ${spec!.type} as a multipart file part (named ${name} in a profile write, value in a field PUT)`);
      }
      continue;
    }
    const problem = valueProblem(name, spec, value);
    if (problem) complain(name, problem);
    else next[name] = value;
  }

  for (const [name, upload] of Object.entries(change.files)) {
    const spec = fieldSpec(schema, name);
    if (!isFileField(spec)) complain(name, 'not an image or file field of the application schema');
    else if (!mayWrite(writer, spec)) complain(name, NOT_WRITABLE);
    // Its stored descriptor, sent back beside a new file, passes; only where the writer can read it, or
    // the answer would tell whether a guess is the hidden descriptor.
    else if (given && Object.hasOwn(given, name) && given[name] !== null && !(mayRead(spec) && jsonEqual(given[name], current[name]))) {
      complain(name, 'given both as a file part and in data');
    } else next[name] = upload.descriptor;
  }

  // Whatever a replace leaves, or a merge names (`null` and `""` included), must hold every required field;
  // but a write-only field a replace leaves out keeps its value unseen, and asking for it would tell whether it is set.
  for (const [name, spec] of Object.entries(schema.fields)) {
    const named = given !== undefined && Object.hasOwn(given, name);
    const asked = named || (mode === 'replace' && mayRead(spec));
    if (spec.required && asked && !refused?.has(name) && mayWrite(writer, spec) && isMissing(next, name)) {
      complain(name, 'is required');
    }
  }
  next.user_id = userId;
  return next;
}

/** Own keys only, as everywhere `data` is read by a field's name: a field named `valueOf` must not find Object.prototype's. */
const isMissing = (data: ProfileData, name: string) => !Object.hasOwn(data, name) || data[name] === '';

/** 400 `E_USER_UPDATE_FAILED` unless `data` holds every required field: a profile that a write creates starts whole. */
export function checkRequiredFields(schema: AppSchema, data: ProfileData): void {
  const errors: FieldErrors = {};
  for (const [name, spec] of Object.entries(schema.fields)) if (spec.required && isMissing(data, name)) addFieldError(errors, name, 'is required');
  if (Object.keys(errors).length > 0) throw updateFailed(errors);
}

function valueProblem(name: string, spec: FieldSpec | undefined, value: unknown): string | undefined {
  const type = spec?.type;
  if (type === 'string' && typeof value !== 'string') return 'must be a string';
  if (type === 'number' && (typeof value !== 'number' || !Number.isFinite(value))) return 'must be a number';
  if (type === 'boolean' && typeof value !== 'boolean') return 'must be a boolean';
  if (type === 'object' && (typeof value !== 'object' || value === null || Array.isArray(value))) return 'must be an object';
  const size = Buffer.byteLength(typeof value === 'string' ? value : JSON.stringify(value));
  if (size > STRING_LIMIT) return `must be at most ${STRING_LIMIT} bytes`;
  if (name === 'email' && !isEmailAddress(value as string)) return `must be ${EMAIL_RULE}`;
  if (name === 'phone_number' && !isPhoneNumber(value as string)) return `must be ${PHONE_RULE}`;
  return undefined;
}

function nextAttributes(
  current: Attributes,
  given: Record<string, unknown> | undefined,
  rules: ChangeRules,
  complain: Complain,
): Attributes {
  if (given === undefined) return current;
  const reserved = rules.reservedNamespace.replace(/:$/, '');
  // In any letter case: `SVC:` is no namespace of the user's own to anyone comparing keys without case.
  const mayWrite = (namespace: string) => {
    const folded = namespace.toLowerCase();
    return folded !== SYSTEM_NAMESPACE && (folded !== reserved || rules.writer === 'app');
  };
  const next: Attributes = {};
  for (const key in current) if (rules.mode === 'merge' || !mayWrite(namespaceOf(key))) next[key] = current[key];

  for (const [key, value] of Object.entries(given)) {
    const field = `attributes.${shownKey(key)}`;
    // Own keys only: `__proto__` would find Object.prototype, which equals `{}`.
    const stored = Object.hasOwn(current, key) ? current[key] : undefined;
    // Before the key's shape: a key stored before a rule it breaks is sent back as read.
    if (stored !== undefined && jsonEqual(value, stored)) {
      next[key] = stored;
      continue;
    }
    const match = ATTRIBUTE_KEY.exec(key);
    if (!match || holdsMisleadingCharacter(match[2])) {
      complain(field, 'keys are <namespace>:<name>');
      continue;
    }
    if (value === null && stored === undefined) continue;
    if (!mayWrite(match[1])) {
      complain(field, `the ${match[1]}: namespace is reserved`);
      continue;
    }
    if (value === null) {
      delete next[key];
      continue;
    }
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
      complain(field, 'must be an array of strings');
    } else if (value.length > ATTRIBUTE_VALUES_LIMIT) {
      complain(field, `at most ${ATTRIBUTE_VALUES_LIMIT} values`);
    } else if (value.some((item) => Buffer.byteLength(item) > STRING_LIMIT)) {
      complain(field, `values are at most ${STRING_LIMIT} bytes`);
    } else next[key] = value;
  }
  if (Object.keys(next).length > ATTRIBUTE_KEYS_LIMIT) complain('attributes', `at most ${ATTRIBUTE_KEYS_LIMIT} keys`);
  return next;
}

const namespaceOf = (key: string) => key.slice(0, Math.max(0, key.indexOf(':')));
