import { isUtf8 } from 'node:buffer';
import { ApiError, badJson, payloadTooLarge, shownKey, unsupportedContentCoding, unsupportedMediaType, validationError } from '../lib/errors.js';
import { readJsonText } from '../lib/json-text.js';
import { shownPath } from '../lib/validate.js';
import type { FilePart, ParsedBody } from './context.js';
import { readUrlEncoded } from './url-encoded.js';
import { uws, type HttpResponse } from './uws.js';

export interface BodyLimits {
  json: number;
  multipart: number;
}

export type BodyKind = 'json' | 'form' | 'multipart';

export const NO_BODY: ParsedBody = { kind: 'none' };

export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';', 1)[0].trim().toLowerCase();
}

/**
 * The cap that applies to a request before any byte of its body is read: the multipart one only
 * where the route takes multipart (elsewhere such a body is refused once read, and may not be long).
 */
export function bodyLimit(contentType: string | undefined, limits: BodyLimits, accepted: readonly BodyKind[]): number {
  return accepted.includes('multipart') && mediaType(contentType) === 'multipart/form-data' ? limits.multipart : limits.json;
}

/** Throws 415 up front for a body in a content coding (`gzip`): none is decoded. */
export function checkContentCoding(contentEncoding: string | undefined): void {
  if (contentEncoding === undefined) return;
  const coding = contentEncoding.trim().toLowerCase();
  if (coding !== '' && coding !== 'identity') throw unsupportedContentCoding(contentEncoding);
}

/** Throws 413 up front when the declared length is already over the cap. */
export function checkDeclaredLength(contentLength: string | undefined, limit: number): void {
  if (contentLength === undefined || contentLength === '') return;
  const declared = Number(contentLength);
  if (!Number.isSafeInteger(declared) || declared < 0) throw validationError({ 'content-length': ['not a valid length'] });
  if (declared > limit) throw payloadTooLarge(limit);
}

/**
 * Collects the body, refusing (413) as soon as it grows past `limit` so a chunked upload is never
 * buffered whole. Must be called synchronously inside the uWS handler.
 */
export function collectBody(res: HttpResponse, limit: number): { body: Promise<Buffer>; cancel(): void } {
  let cancel = () => {};
  const body = new Promise<Buffer>((resolve, reject) => {
    cancel = () => reject(new ApiError(400, 'E_ABORTED', 'The client went away before sending its body'));
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    res.onData((chunk, isLast) => {
      if (failed) return;
      size += chunk.byteLength;
      if (size > limit) {
        failed = true;
        reject(payloadTooLarge(limit));
        return;
      }
      // uWS reuses the chunk's memory after this callback returns: copy it.
      chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (isLast) resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    });
  });
  return { body, cancel };
}

export function parseBody(raw: Buffer, contentType: string | undefined, accepted: readonly BodyKind[]): ParsedBody {
  if (raw.length === 0) return NO_BODY;
  const type = mediaType(contentType);
  if (type === 'application/json' && accepted.includes('json')) return { kind: 'json', value: parseJson(raw) };
  if (type === 'application/x-www-form-urlencoded' && accepted.includes('form')) return parseForm(raw);
  if (type === 'multipart/form-data' && accepted.includes('multipart')) return parseMultipart(raw, contentType!);
  throw unsupportedMediaType(type || '(none)');
}

function parseJson(raw: Buffer): unknown {
  const read = readJsonText(raw);
  if ('problem' in read) throw badJson(read.problem);
  if ('loneSurrogate' in read) throw validationError({ [shownPath(read.loneSurrogate.path)]: [read.loneSurrogate.problem] });
  return read.value;
}

/**
 * An `application/x-www-form-urlencoded` body, read as a query string is; bytes that are not UTF-8
 * are refused, as in a multipart text part, and a name given twice (RFC 6749 §3.2).
 */
function parseForm(raw: Buffer): ParsedBody {
  if (!isUtf8(raw)) throw validationError({ body: ['must be UTF-8'] });
  const fields = new Map<string, string>();
  for (const [name, value] of readUrlEncoded(raw.toString('utf8'), 'body')) {
    if (fields.has(name)) throw validationError({ [shownKey(name)]: ['given more than once'] });
    fields.set(name, value);
  }
  // fromEntries defines own properties: a field named __proto__ stays a field.
  return { kind: 'form', fields: Object.fromEntries(fields) };
}

/**
 * How many parts a multipart body may hold: a profile write's are `data`, `attributes` and a file per
 * schema field (at most 200). Each part costs the loop its own checks and any refusal a line of its
 * own, so 200 000 empty parts in the 10 MiB cap took it ~5 s and answered 40 MB.
 */
const MAX_PARTS = 256;

const malformedMultipart = (problem: string) =>
  validationError({ body: [problem] }, 'E_VALIDATION', 'Malformed multipart body');

/** The `boundary` parameter of a multipart content type (RFC 2046 §5.1.1), quoted or not. */
function boundaryOf(contentType: string): string | undefined {
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

function parseMultipart(raw: Buffer, contentType: string): ParsedBody {
  const boundary = boundaryOf(contentType);
  if (!boundary) throw malformedMultipart('the content type names no boundary');
  // uWS parses what it can of a truncated body and drops the rest: the closing delimiter shows it arrived whole.
  if (!raw.includes(`--${boundary}--`)) throw malformedMultipart('the body has no closing boundary: it was cut short or is not multipart');
  // Each delimiter but the closing one opens a part.
  const delimited = occurrences(raw, `--${boundary}`) - 1;
  if (delimited > MAX_PARTS) throw malformedMultipart(`a body holds at most ${MAX_PARTS} parts`);
  // uWS reads everything after its `boundary=` as the boundary, quotes (.NET sends them) and later
  // parameters too, and a type not in lower case not at all: it is handed the boundary alone.
  const parts = uws.getParts(raw, `multipart/form-data; boundary=${boundary}`);
  if (!parts) throw malformedMultipart('malformed multipart/form-data body');
  // uWS skips a part without headers, and gives up on a part holding `--<boundary>` anywhere (a
  // delimiter only opens a line, RFC 2046 §5.1.1).
  if (parts.length !== delimited) {
    throw malformedMultipart('every part needs its headers (a Content-Disposition naming it), and no part may hold the boundary');
  }
  const fields = new Map<string, string>();
  const files = new Map<string, FilePart>();
  for (const part of parts) {
    if (!part.name) throw malformedMultipart('every part needs a name');
    if (fields.has(part.name) || files.has(part.name)) {
      throw validationError({ [shownKey(part.name)]: ['given more than once'] });
    }
    const data = Buffer.from(new Uint8Array(part.data));
    if (part.filename !== undefined || (part.type !== undefined && mediaType(part.type) !== 'text/plain')) {
      files.set(part.name, { data, contentType: part.type ?? 'application/octet-stream', filename: part.filename });
    } else {
      if (!isUtf8(data)) throw validationError({ [shownKey(part.name)]: ['text parts are UTF-8'] });
      fields.set(part.name, data.toString('utf8'));
    }
  }
  // As in a form: own properties, so a part named __proto__ stays a part.
  return { kind: 'multipart', fields: Object.fromEntries(fields), files: Object.fromEntries(files) };
}

function occurrences(bytes: Buffer, text: string): number {
  let count = 0;
  for (let at = bytes.indexOf(text); at >= 0; at = bytes.indexOf(text, at + text.length)) count++;
  return count;
}
