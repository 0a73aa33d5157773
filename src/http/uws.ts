import { createRequire } from 'node:module';
import type * as Uws from 'uWebSockets.js';

/**
 * Loads the native uWebSockets.js binary directly. The package's own entry silently falls back to a
 * slow JS implementation when the binary does not fit this Node build; we would rather not start.
 */
function loadNativeUws(): typeof Uws {
  const require = createRequire(import.meta.url);
  const binary = `uWebSockets.js/binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  try {
    return require(binary) as typeof Uws;
  } catch (error) {
    throw new Error(
      `uWebSockets.js has no native binary for this Node.js (${binary}); refusing to run on its slow fallback: ${String(error)}`,
    );
  }
}

export const uws = loadNativeUws();
// uWS.js's undocumented switch that stops the `uWebSockets: 20` banner header on every response.
uws._cfg('silent');
export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket, MultipartField } from 'uWebSockets.js';
