import type { HttpResponse } from './uws.js';

/**
 * The headers every answer of the service carries, whichever server gives it: no content sniffing,
 * and identity data and tokens never kept by a shared cache.
 */
export function writeSecurityHeaders(res: HttpResponse): void {
  res.writeHeader('x-content-type-options', 'nosniff');
  res.writeHeader('cache-control', 'no-store');
}
