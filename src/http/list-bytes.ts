import { validationError } from '../lib/errors.js';

/**
 * The most item bytes one list answer holds. An item may be large (a profile up to 4 MiB, an OIDC
 * client up to 1 MiB), so a page of 1000 could be gigabytes, built in memory.
 */
export const LIST_BYTES_LIMIT = 32 * 1024 * 1024;

const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']}');

/**
 * `{"total_results": total, "results": [...]}` as JSON bytes, each item as `serialize` writes it. A
 * page is refused (400 on `page_size`, naming `what` it lists) as it passes LIST_BYTES_LIMIT, before
 * the rest is read.
 */
export function listBytes<T>(total: number, items: Iterable<T>, serialize: (item: T) => Uint8Array, what: string): Buffer {
  const parts: Uint8Array[] = [Buffer.from(`{"total_results":${total},"results":[`)];
  let bytes = 0;
  for (const entry of items) {
    const item = serialize(entry);
    bytes += item.length;
    if (bytes > LIST_BYTES_LIMIT) {
      throw validationError({ page_size: [`the page holds more than ${LIST_BYTES_LIMIT / (1024 * 1024)} MiB of ${what}: ask for fewer per page`] });
    }
    if (parts.length > 1) parts.push(COMMA);
    parts.push(item);
  }
  parts.push(CLOSE);
  return Buffer.concat(parts);
}
