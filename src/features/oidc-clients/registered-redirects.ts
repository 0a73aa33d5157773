import { HIGH_KEY, type Database, type Key, type Store } from '../../storage/store.js';
import type { StoredClient } from './service.js';

/**
 * Where an application said its sign-ins may land: the `redirect_uris` and `allowed_origins` of its
 * OIDC clients. A link of this service that sent its holder, tokens in hand, anywhere its maker chose
 * would be an open redirect under this service's name.
 */
export class RegisteredRedirects {
  private readonly clients: Database<StoredClient, Key>;

  constructor(store: Store) {
    this.clients = store.db<StoredClient>('oidc_clients');
  }

  /**
   * Whether `url` (an absolute http(s) URL) is one of the app's `redirect_uris` as written, compared as
   * OAuth compares them, without its fragment (a link's fragment is replaced by the tokens), or lies on
   * one of its `allowed_origins`.
   */
  includes(appId: string, url: string): boolean {
    const withoutFragment = url.split('#', 1)[0];
    const { origin } = new URL(url);
    for (const { value } of this.clients.getRange({ start: [appId, ''], end: [appId, HIGH_KEY] })) {
      const { redirect_uris = [], allowed_origins = [] } = value.config;
      if (redirect_uris.includes(withoutFragment) || allowed_origins.includes(origin)) return true;
    }
    return false;
  }
}
