import { isHttpOrigin } from '../../lib/urls.js';
import type { Store } from '../../storage/store.js';
import type { StoredClient } from './service.js';

/**
 * The `allowed_origins` of every OIDC client of every app, which CORS answers on the routes a browser
 * client calls: held in memory so a request's check is one lookup. Read whole at the first lookup (no
 * start, nor a CLI command, reads every client) and read anew at the first lookup after a committed
 * change to any client, as `RegisteredRedirects` forgets an app's places (and, as there, nothing else
 * writes `oidc_clients` while a server runs). Forgetting rather than counting each change in: a read
 * that began while a change was being committed may or may not hold it, and the next one does. An entry
 * stored before the origin rule, which no browser sends (`https://app.example/`), is not kept: `null` or
 * `*` must never be answered.
 */
export class RegisteredOrigins {
  private origins: Set<string> | undefined;

  constructor(private readonly store: Store) {}

  has(origin: string): boolean {
    this.origins ??= this.read();
    return this.origins.has(origin);
  }

  /** Call once a change to a client is committed, before it is acknowledged. */
  forget(): void {
    this.origins = undefined;
  }

  private read(): Set<string> {
    const origins = new Set<string>();
    for (const { value } of this.store.db<StoredClient>('oidc_clients').getRange({})) {
      for (const origin of value.config.allowed_origins ?? []) if (isHttpOrigin(origin)) origins.add(origin);
    }
    return origins;
  }
}
