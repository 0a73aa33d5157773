import { addFieldError, shownKey, type FieldErrors } from '../../lib/errors.js';
import type { FilePart, ParsedBody } from '../../http/context.js';
import { readJsonString, readJsonText, type JsonRead } from '../../lib/json-text.js';
import { isPlainObject, shownPath } from '../../lib/validate.js';
import type { AppSchema, FieldSpec } from '../applications/schemas.js';
import { fieldSpec } from '../applications/schemas.js';
import {
  isFileField,
  mayWrite,
  NOT_WRITABLE,
  updateFailed,
  type Precheck,
  type ProfileChange,
  type SchemaOf,
  type Upload,
  type Writer,
} from './profile-change.js';
import type { FileUpload, ProfileFiles } from './profile-files.js';

const JSON_PARTS = new Set(['data', 'attributes']);
/** A number as JSON writes one (RFC 8259 §6): no hex, no leading zeros, no `Infinity`. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * A text part (one without a filename or a content type: RFC 7578 §4.4 makes it text/plain) named after
 * an `image`/`file` field is that field's file; the body reader has checked it as UTF-8, so its bytes are the text's.
 */
const textFile = (text: string): FilePart => ({ data: Buffer.from(text, 'utf8'), contentType: 'text/plain' });

function collector() {
  const errors: FieldErrors = {};
  return {
    errors,
    complain: (field: string, message: string) => addFieldError(errors, shownKey(field), message),
    throwIfAny: () => {
      if (Object.keys(errors).length > 0) throw updateFailed(errors);
    },
  };
}

/**
 * `{data, attributes}` of a profile write from a JSON body, or from multipart parts: `data` and
 * `attributes` hold JSON text, a part named after an `image`/`file` field holds its file. Images are
 * decoded last (up to 50 MP each, 100 MP in all): a body refused by any other check of it, the writer's
 * rights among them (`precheck` runs the change rules on the rest of it), costs no decode. The JSON body's keys in
 * `readOnly` are ignored.
 */
export async function readProfileChange(
  body: ParsedBody,
  schemaOf: SchemaOf,
  writer: Writer,
  precheck: Precheck,
  readOnly: ReadonlySet<string>,
  files: ProfileFiles,
): Promise<ProfileChange> {
  const { errors, complain, throwIfAny } = collector();
  const parts: FileUpload[] = [];
  let shape: Record<string, unknown> = {};
  let readBy: AppSchema | undefined;
  if (body.kind === 'json') {
    if (!isPlainObject(body.value)) throw updateFailed({ body: ['must be an object with data and/or attributes'] });
    shape = body.value;
  } else if (body.kind === 'multipart') {
    const fileParts = Object.entries(body.files);
    const textParts: [string, string][] = [];
    for (const [name, text] of Object.entries(body.fields)) {
      if (!JSON_PARTS.has(name) && isFileField(fieldSpec((readBy ??= schemaOf()), name))) fileParts.push([name, textFile(text)]);
      else textParts.push([name, text]);
    }
    // Text parts arrive decoded (and checked as UTF-8) by the body reader.
    const reads: Record<string, JsonRead> = Object.fromEntries(textParts.map(([name, text]) => [name, readJsonString(text)]));
    for (const [name, part] of fileParts) {
      // Clients may label the JSON parts application/json, which reads as a file part.
      if (JSON_PARTS.has(name)) {
        reads[name] = readJsonText(part.data);
        continue;
      }
      const spec = fieldSpec((readBy ??= schemaOf()), name);
      if (!isFileField(spec)) complain(name, 'unknown part: not an image or file field of the application schema');
      else if (!mayWrite(writer, spec)) complain(name, NOT_WRITABLE);
      else parts.push({ name, part, spec: spec! });
    }
    for (const [name, read] of Object.entries(reads)) {
      if (!JSON_PARTS.has(name)) {
        complain(name, 'unknown part: expected data, attributes or a file part named after an image or file field');
        continue;
      }
      if ('problem' in read) complain(name, `must be JSON text: ${read.problem}`);
      else if ('loneSurrogate' in read) addFieldError(errors, shownPath([name, ...read.loneSurrogate.path]), read.loneSurrogate.problem);
      else shape[name] = read.value;
    }
  }
  for (const key of Object.keys(shape)) {
    if (!JSON_PARTS.has(key) && !readOnly.has(key)) complain(key, 'unknown property: expected data and attributes');
  }
  for (const key of JSON_PARTS) {
    if (shape[key] !== undefined && !isPlainObject(shape[key])) complain(key, 'must be an object');
  }
  throwIfAny();
  const change: ProfileChange = {
    data: shape.data as Record<string, unknown> | undefined,
    attributes: shape.attributes as Record<string, unknown> | undefined,
    files: {},
    ...(readBy && { readBy }),
  };
  if (parts.length === 0) return change;
  precheck({ ...change, files: Object.fromEntries(parts.map(({ name, part }) => [name, undecoded(part)])) });
  change.files = await files.prepareUploads(parts, complain);
  throwIfAny();
  return change;
}

/**
 * A file part as a precheck sees it: its type and digest are known once it is decoded, so they count
 * for nothing in the profile's size there (the turn checks the real descriptor).
 */
const undecoded = (part: FilePart): Upload => ({ descriptor: { content_type: '', size: part.data.length, sha256: '' }, bytes: part.data });

/**
 * The change of one field from `{value}` in JSON, or a multipart part `value`: text (read by the
 * field's type) or, for `image`/`file` fields, a file.
 */
export async function readFieldChange(body: ParsedBody, name: string, schemaOf: SchemaOf, writer: Writer, files: ProfileFiles): Promise<ProfileChange> {
  if (body.kind === 'json') {
    const value = body.value;
    if (!isPlainObject(value) || !('value' in value) || Object.keys(value).length !== 1) {
      throw updateFailed({ value: ['the body must be {"value": …}'] });
    }
    return { data: { [name]: value.value }, files: {} };
  }
  if (body.kind === 'multipart') {
    const { complain, throwIfAny } = collector();
    for (const part of [...Object.keys(body.fields), ...Object.keys(body.files)]) {
      if (part !== 'value') complain(part, 'unknown part: a field PUT takes one part, named value');
    }
    throwIfAny();
    const readBy = schemaOf();
    const spec = fieldSpec(readBy, name);
    const text = body.fields.value;
    const file: FilePart | undefined = body.files.value ?? (text !== undefined && isFileField(spec) ? textFile(text) : undefined);
    if (file && isFileField(spec)) {
      // Before the decode, which costs far more than the refusal.
      if (!mayWrite(writer, spec)) throw updateFailed({ [name]: [NOT_WRITABLE] });
      const uploads = await files.prepareUploads([{ name, part: file, spec: spec! }], complain);
      throwIfAny();
      return { files: uploads, readBy };
    }
    if (file) throw updateFailed({ [shownKey(name)]: ['not an image or file field: send its value as a text part'] });
    if (text !== undefined) return { data: { [name]: typedText(text, spec) }, files: {}, readBy };
  }
  throw updateFailed({ value: ['a value is required: JSON {"value": …} or a multipart part named value'] });
}

/** Multipart text as the field's type, so `42` fills a number field; text that does not parse stays text (and fails the type check). */
function typedText(text: string, spec: FieldSpec | undefined): unknown {
  switch (spec?.type) {
    case 'number':
      return JSON_NUMBER.test(text) && Number.isFinite(Number(text)) ? Number(text) : text;
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : text;
    case 'object': {
      const read = readJsonString(text);
      return 'value' in read ? read.value : text;
    }
    default:
      return text;
  }
}
