import { errorBody, unavailable } from '../lib/errors.js';
import { closeApp, listenExclusive, uws, type HttpResponse } from './uws.js';
import { writeSecurityHeaders } from './security-headers.js';

export interface UnavailableServer {
  /** The port it listens on (the one given, or the free one it got for 0). */
  readonly port: number;
  /** Stops listening and closes its connections; once is enough, later calls do nothing. */
  close(): void;
}

export interface Unavailability {
  /** What `GET /health` answers as `status`. */
  health: string;
  /** The message of every other request's 503 `E_UNAVAILABLE`. */
  message: string;
  retryAfterSeconds: number;
}

const ignoreAbort = () => {};

/**
 * A bare server for a time the service cannot serve (its data format upgrading): `GET /health`
 * answers 503 `{"status": health}` and any other request 503 `E_UNAVAILABLE`, both with
 * `Retry-After`. It holds the port as exclusively as the server does. Each answer closes its
 * connection, so no client keeps one to this server past its time and a retry reaches the next.
 */
export async function listenUnavailable(host: string, port: number, why: Unavailability): Promise<UnavailableServer> {
  const health = JSON.stringify({ status: why.health });
  const refused = unavailable(why.message, why.retryAfterSeconds);
  const refusal = JSON.stringify(errorBody(refused));
  const headers = { 'content-type': 'application/json', ...refused.headers };

  const app = uws.App();
  app.any('/*', (res, req) => {
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const body = req.getUrl() === '/health' && (method === 'GET' || method === 'HEAD') ? health : refusal;
    answer(res, method === 'HEAD', body);
  });

  function answer(res: HttpResponse, head: boolean, body: string): void {
    res.cork(() => {
      res.writeStatus('503 Service Unavailable');
      writeSecurityHeaders(res);
      for (const [name, value] of Object.entries(headers)) res.writeHeader(name, value);
      if (!head) return res.end(body, true);
      // As server.ts answers HEAD: uWS takes an answer ended with a length for one still pending, and
      // aborts the process when the handler returns without an abort handler.
      res.onAborted(ignoreAbort);
      res.endWithoutBody(Buffer.byteLength(body), true);
    });
  }

  const listening = await listenExclusive(app, host, port);
  let open = true;
  return {
    port: listening.port,
    close() {
      if (!open) return;
      open = false;
      closeApp(app);
    },
  };
}
