import { HIGH_KEY, type Database, type Key, type Store } from '../../storage/store.js';
import type { StoredClient } from './service.js';

/** The places of one app: `redirect_uris` as written, and `allowed_origins`. */
interface Places {
  uris: Set<string>;
  origins: Set<string>;
  /** What the entry costs to keep, in characters (its strings, plus a slot's worth each). */
  weight: number;
}

/**
 * How much the kept places may weigh, in characters: the 100 clients of an app, each with 100 of both
 * lists at 2048 characters, hold ~41 M of them, so such an app stays cached beside many ordinary ones.
 */
export const MAX_CACHED_CHARS = 64 * 1024 * 1024;
/** About what a set slot and a string header cost beside the characters; an app with no places weighs one. */
const SLOT_CHARS = 64;

/** The origin of an absolute URL; undefined for anything else, which lies on no origin. */
function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * Where an application said its sign-ins may land: the `redirect_uris` and `allowed_origins` of its
 * OIDC clients. A link of this service that sent its holder, tokens in hand, anywhere its maker chose
 * would be an open redirect under this service's name.
 *
 * Every link made or redeemed with an absolute location asks, and reading the places from the clients
 * decodes every client of the app (up to 100 of 1 MiB each): the places are kept per app, built on first
 * use, and forgotten (`forget`) by each commit that creates, replaces or deletes one of the app's clients
 * (`OidcClientService`, which alone writes `oidc_clients` while a server runs: the CLI never does, and
 * format upgrades and restores run before a server opens the data). Least recently used apps go first
 * past `maxChars`.
 */
export class RegisteredRedirects {
  private readonly clients: Database<StoredClient, Key>;
  /** In order of use, least recent first. */
  private readonly cached = new Map<string, Places>();
  private cachedChars = 0;

  constructor(
    store: Store,
    private readonly maxChars = MAX_CACHED_CHARS,
  ) {
    this.clients = store.db<StoredClient>('oidc_clients');
  }

  /**
   * Whether `url` is one of the app's `redirect_uris` as written, compared as OAuth compares them,
   * without its fragment (a link's fragment is replaced by the tokens), or lies on one of its
   * `allowed_origins`. What is no absolute URL is neither.
   */
  includes(appId: string, url: string): boolean {
    const { uris, origins } = this.placesOf(appId);
    if (uris.has(url.split('#', 1)[0])) return true;
    const origin = originOf(url);
    return origin !== undefined && origins.has(origin);
  }

  /** Call once a change to a client of `appId` is committed, before it is acknowledged. */
  forget(appId: string): void {
    const places = this.cached.get(appId);
    if (!places) return;
    this.cached.delete(appId);
    this.cachedChars -= places.weight;
  }

  private placesOf(appId: string): Places {
    let places = this.cached.get(appId);
    if (places) {
      this.cached.delete(appId);
    } else {
      places = this.read(appId);
      this.cachedChars += places.weight;
      for (const [oldest, { weight }] of this.cached) {
        if (this.cachedChars <= this.maxChars) break;
        this.cached.delete(oldest);
        this.cachedChars -= weight;
      }
    }
    this.cached.set(appId, places);
    return places;
  }

  private read(appId: string): Places {
    const places: Places = { uris: new Set(), origins: new Set(), weight: SLOT_CHARS };
    const add = (set: Set<string>, entry: string) => {
      if (set.has(entry)) return;
      set.add(entry);
      places.weight += entry.length + SLOT_CHARS;
    };
    for (const { value } of this.clients.getRange({ start: [appId, ''], end: [appId, HIGH_KEY] })) {
      const { redirect_uris = [], allowed_origins = [] } = value.config;
      for (const uri of redirect_uris) add(places.uris, uri);
      for (const origin of allowed_origins) add(places.origins, origin);
    }
    return places;
  }
}
