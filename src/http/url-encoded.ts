import { validationError } from '../lib/errors.js';

/**
 * `application/x-www-form-urlencoded` text (a query string or a form body) as its parameters.
 * URLSearchParams keeps a `%` that starts no escape as it is and reads escapes that are not UTF-8 as
 * U+FFFD: what the caller sent would be searched for or stored as something else, so either is a 400
 * on `field`, as in a path.
 */
export function readUrlEncoded(text: string, field: string): URLSearchParams {
  if (text.includes('%')) {
    try {
      decodeURIComponent(text);
    } catch {
      throw validationError({ [field]: ['malformed percent-encoding (a % must start an escape of UTF-8)'] });
    }
  }
  return new URLSearchParams(text);
}
