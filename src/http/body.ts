import { ApiError, badJson, payloadTooLarge, unsupportedMediaType, validationError } from '../lib/errors.js';
import type { FilePart, ParsedBody } from './context.js';
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

/** The cap that applies to a request before any byte of its body is read. */
export function bodyLimit(contentType: string | undefined, limits: BodyLimits): number {
  return mediaType(contentType) === 'multipart/form-data' ? limits.multipart : limits.json;
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
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (error) {
    throw badJson((error as Error).message);
  }
}

/** An `application/x-www-form-urlencoded` body; a name given twice is refused (RFC 6749 §3.2). */
function parseForm(raw: Buffer): ParsedBody {
  const fields = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(raw.toString('utf8'))) {
    if (fields.has(name)) throw validationError({ [name]: ['given more than once'] });
    fields.set(name, value);
  }
  // fromEntries defines own properties: a field named __proto__ stays a field.
  return { kind: 'form', fields: Object.fromEntries(fields) };
}

function parseMultipart(raw: Buffer, contentType: string): ParsedBody {
  const parts = uws.getParts(raw, contentType);
  if (!parts) throw validationError({ body: ['malformed multipart/form-data body'] }, 'E_VALIDATION', 'Malformed multipart body');
  const fields: Record<string, string> = {};
  const files: Record<string, FilePart> = {};
  for (const part of parts) {
    const data = Buffer.from(new Uint8Array(part.data));
    if (part.filename !== undefined || (part.type !== undefined && part.type !== 'text/plain')) {
      files[part.name] = { data, contentType: part.type ?? 'application/octet-stream', filename: part.filename };
    } else {
      fields[part.name] = data.toString('utf8');
    }
  }
  return { kind: 'multipart', fields, files };
}
