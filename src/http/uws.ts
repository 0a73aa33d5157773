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

/**
 * Listens on `host:port` alone, answering the listen socket and the port it got (the one given, or a
 * free one for 0). uWS otherwise listens with SO_REUSEPORT on a given port, and a second server
 * started on it would silently take half the connections. (The option is missing from the package's
 * type declarations.)
 */
export function listenExclusive(app: Uws.TemplatedApp, host: string, port: number): Promise<{ socket: Uws.us_listen_socket; port: number }> {
  const { LIBUS_LISTEN_EXCLUSIVE_PORT } = uws as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT: number };
  const listen = app.listen as unknown as (h: string, p: number, options: number, cb: (socket: Uws.us_listen_socket | false) => void) => void;
  return new Promise((resolve, reject) => {
    listen.call(app, host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
      if (!socket) return reject(new Error(`Cannot listen on HOST=${host} PORT=${port} (is the port in use, or HOST not an address of this machine?)`));
      resolve({ socket, port: uws.us_socket_local_port(socket as never) });
    });
  });
}

/** Stops listening and closes every connection of `app` (present on the native app though missing from the package's type declarations). */
export const closeApp = (app: Uws.TemplatedApp) => (app as unknown as { close(): void }).close();
