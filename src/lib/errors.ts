import { STATUS_CODES } from 'node:http';

export type FieldErrors = Record<string, string[]>;

/** A failure the caller may see: its status, stable `E_…` code and message form the ADDENDUM §7 body. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly messages: string[];
  readonly fieldErrors?: FieldErrors;
  readonly headers?: Record<string, string>;

  constructor(
    status: number,
    code: string,
    message: string,
    options: { fieldErrors?: FieldErrors; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    const { shown, more } = shownFieldErrors(options.fieldErrors);
    this.fieldErrors = shown;
    // ADDENDUM §7: `messages` holds at least `[message]`; the field errors follow it.
    this.messages = [message, ...fieldErrorLines(shown ?? {}), ...(more > 0 ? [`and ${more} more fields refused`] : [])];
    this.headers = options.headers;
  }
}

/**
 * How many fields one refusal names at most: a body of 1 MiB of keys a route refuses, or of 200 000
 * multipart parts, was answered field by field, megabytes of it.
 */
export const SHOWN_FIELD_ERRORS = 100;

/** The first `SHOWN_FIELD_ERRORS` fields of `fieldErrors`, and how many more it names. */
function shownFieldErrors(fieldErrors: FieldErrors | undefined): { shown?: FieldErrors; more: number } {
  if (fieldErrors === undefined) return { more: 0 };
  const fields = Object.keys(fieldErrors);
  if (fields.length <= SHOWN_FIELD_ERRORS) return { shown: fieldErrors, more: 0 };
  // fromEntries defines own properties: a field named __proto__ stays a field.
  const shown = Object.fromEntries(fields.slice(0, SHOWN_FIELD_ERRORS).map((field) => [field, fieldErrors[field]]));
  return { shown, more: fields.length - SHOWN_FIELD_ERRORS };
}

/** Adds `message` under `field`; safe for any field name, also `constructor`, `valueOf` or `__proto__`. */
export function addFieldError(errors: FieldErrors, field: string, message: string): void {
  if (Object.hasOwn(errors, field)) errors[field].push(message);
  else Object.defineProperty(errors, field, { value: [message], enumerable: true, writable: true, configurable: true });
}

/** Each field error as `<field>: <message>`. */
export function fieldErrorLines(fieldErrors: FieldErrors): string[] {
  return Object.entries(fieldErrors).flatMap(([field, list]) => list.map((m) => `${field}: ${m}`));
}

export interface ErrorBody {
  statusCode: number;
  error: string;
  code: string;
  message: string;
  messages: string[];
  field_errors?: FieldErrors;
}

export function errorBody(error: ApiError): ErrorBody {
  const body: ErrorBody = {
    statusCode: error.status,
    error: STATUS_CODES[error.status] ?? 'Error',
    code: error.code,
    message: error.message,
    messages: error.messages,
  };
  if (error.fieldErrors) body.field_errors = error.fieldErrors;
  return body;
}

export const validationError = (fieldErrors: FieldErrors, code = 'E_VALIDATION', message = 'Invalid request') =>
  new ApiError(400, code, message, { fieldErrors });

/**
 * 400 `E_VALIDATION` for a limit the request would pass (`reason`, lower case): under `field` when a
 * body field named what is full, else in the message alone.
 */
export const limitReached = (reason: string, field?: string) =>
  field === undefined ? new ApiError(400, 'E_VALIDATION', reason.charAt(0).toUpperCase() + reason.slice(1)) : validationError({ [field]: [reason] });

/** 410 `E_LINK_EXPIRED`: a magic link that was spent, expired, or outlived what it was for. */
export const linkExpired = (message: string) => new ApiError(410, 'E_LINK_EXPIRED', message);

export const badJson = (detail: string) => new ApiError(400, 'E_BAD_JSON', `The body cannot be read as JSON: ${detail}`);

export const unauthorized = (message = 'Missing or invalid credentials', code = 'E_UNAUTHORIZED') =>
  new ApiError(401, code, message);

/**
 * A 401 must name the scheme that would be accepted (RFC 9110 §11.6.1); on a route taking a bearer
 * token, one that was sent and refused says so (RFC 6750 §3.1), which clients read to refresh it.
 */
const BEARER_CHALLENGE = { 'www-authenticate': 'Bearer' };
const INVALID_TOKEN_CHALLENGE = { 'www-authenticate': 'Bearer error="invalid_token"' };

/**
 * The challenge of a route taking an application's key (and secret) in headers: no registered scheme
 * carries them, so it names the headers, e.g. `AppKey key_header="x-svc-app-key", secret_header="x-svc-app-secret"`.
 */
export const appKeyChallenge = (keyHeader: string, secretHeader?: string) => ({
  'www-authenticate': `AppKey key_header="${keyHeader}"${secretHeader === undefined ? '' : `, secret_header="${secretHeader}"`}`,
});

/** 401 of a route taking an application's credentials, with the route's `appKeyChallenge`. */
export const appKeyRefused = (message: string, challenge: Record<string, string>) =>
  new ApiError(401, 'E_UNAUTHORIZED', message, { headers: challenge });

/** 401 of a bearer route that was sent no bearer token it could read. */
export const bearerRequired = (message: string) => new ApiError(401, 'E_UNAUTHORIZED', message, { headers: BEARER_CHALLENGE });

/** 401 of a bearer route for the token it was sent: invalid, expired, revoked, or its user's. */
export const tokenRefused = (message: string, code = 'E_UNAUTHORIZED') =>
  new ApiError(401, code, message, { headers: INVALID_TOKEN_CHALLENGE });

export const forbidden = (message = 'Not allowed') => new ApiError(403, 'E_FORBIDDEN', message);

/** How much of a caller's key or ID an error shows: the caller may have sent a secret in its place. */
const SHOWN_LENGTH = 64;
/** What the service's own credentials look like (secrets, tokens, link IDs): long, of mixed case and digits. */
const CREDENTIAL_LIKE = /^(?=.*[A-Z])(?=.*[a-z])(?=.*[0-9])[A-Za-z0-9_.~+/=-]{24,}$/;
/** The service's resource IDs (`user_01…`), which are no secret and worth showing whole. */
const RESOURCE_ID = /^[a-z]+(_[a-z]+)*_[0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * A key or ID the caller chose, as an error names it: `""` for the empty one, its first 6 characters
 * when it looks like a credential (a secret pasted where a name or an ID goes), else cut to 64.
 */
export function shownKey(key: string): string {
  if (key === '') return '""';
  if (CREDENTIAL_LIKE.test(key) && !RESOURCE_ID.test(key)) return `${cut(key, 6)}…`;
  return key.length > SHOWN_LENGTH ? `${cut(key, SHOWN_LENGTH)}…` : key;
}

/** The first `length` UTF-16 units of `text`, one fewer rather than half of a surrogate pair. */
function cut(text: string, length: number): string {
  const code = text.charCodeAt(length - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? length - 1 : length);
}

/** `notFound('user')` answers 404 `E_USER_NOT_FOUND`. */
export const notFound = (resource: string, id?: string) =>
  new ApiError(
    404,
    `E_${resource.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_NOT_FOUND`,
    id === undefined ? `${resource} not found` : `${resource} ${JSON.stringify(shownKey(id))} not found`,
  );

export const conflict = (code: string, message: string) => new ApiError(409, code, message);

export const invalidTransition = (state: string, event: string) =>
  new ApiError(409, 'E_INVALID_STATE_TRANSITION', `Event ${event} is not allowed in state ${state}`);

export const payloadTooLarge = (limit: number) =>
  new ApiError(413, 'E_PAYLOAD_TOO_LARGE', `Body exceeds the limit of ${limit} bytes`);

export const unsupportedMediaType = (contentType: string) =>
  new ApiError(415, 'E_UNSUPPORTED_MEDIA_TYPE', `Content type ${JSON.stringify(contentType)} is not supported`);

/** 415 for a body in a content coding (RFC 9110 §8.4.1): none is decoded, and its bytes read as they are would be misread. */
export const unsupportedContentCoding = (coding: string) =>
  new ApiError(415, 'E_UNSUPPORTED_MEDIA_TYPE', `Content encoding ${JSON.stringify(shownKey(coding))} is not supported: send the body unencoded`);

export const rateLimited = (retryAfterSeconds: number) =>
  new ApiError(429, 'E_RATE_LIMITED', 'Too many requests', {
    headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  });

/** 503 `E_UNAVAILABLE`: nothing was changed, and the same request may be sent again (`retry-after` seconds). */
export const unavailable = (message = 'Service temporarily unavailable', retryAfterSeconds = 1, cause?: unknown) =>
  new ApiError(503, 'E_UNAVAILABLE', message, { headers: { 'retry-after': String(retryAfterSeconds) }, cause });

/**
 * 503 for a commit that failed (a full disk, an I/O error): nothing was kept. `cause` is the storage's
 * own error, which the answer never shows and the log line of the request names.
 */
export const storageFailure = (cause: unknown) => unavailable('The change could not be stored; try again', 1, cause);

export const internalError = () => new ApiError(500, 'E_INTERNAL', 'Internal server error');
