import { isHttpOrigin } from '../../lib/urls.js';
import type { Store } from '../../storage/store.js';
import type { StoredClient } from './service.js';

/** A client's `allowed_origins` (absent on a client stored without them). */
export const originsOf = (client: StoredClient | undefined): readonly string[] => client?.config.allowed_origins ?? [];

/**
 * The `allowed_origins` of every OIDC client of every app, which CORS answers on the routes a browser
 * client calls: held in memory so a request's check is one lookup. Read whole when the service opens,
 * then told of each committed create, replace or delete of a client, as `RegisteredRedirects` is (and,
 * as there, nothing else writes `oidc_clients` while a server runs). Each origin is counted once per client listing it, so one that
 * two clients register stays until both drop it. An entry stored before the origin rule, which no
 * browser sends (`https://app.example/`), is not kept: `null` or `*` must never be answered.
 */
export class RegisteredOrigins {
  private readonly counts = new Map<string, number>();

  constructor(store: Store) {
    for (const { value } of store.db<StoredClient>('oidc_clients').getRange({})) this.add(originsOf(value), 1);
  }

  has(origin: string): boolean {
    return this.counts.has(origin);
  }

  /** Call once a change to a client is committed, before it is acknowledged: its origins before and after (none for a client made or deleted). */
  replace(before: readonly string[], after: readonly string[]): void {
    this.add(before, -1);
    this.add(after, 1);
  }

  private add(origins: readonly string[], delta: 1 | -1): void {
    for (const origin of new Set(origins)) {
      if (!isHttpOrigin(origin)) continue;
      const count = (this.counts.get(origin) ?? 0) + delta;
      if (count > 0) this.counts.set(origin, count);
      else this.counts.delete(origin);
    }
  }
}
