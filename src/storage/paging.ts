import { HIGH_KEY, type Database, type Key } from './store.js';

export type SortOrder = 'asc' | 'desc';

export interface PageRequest {
  /** Key elements shared by every entry of the list: `[appId]`. */
  prefix: Key[];
  pageSize: number;
  /** Exclusive cursor: the last ID of the previous page. */
  after?: string;
  sort?: SortOrder;
}

export interface PageEntry<V> {
  id: string;
  value: V;
}

/**
 * One page of a prefix range whose last key element is a ULID-style ID: O(page) at any depth,
 * no gaps or duplicates between pages because the cursor is a key, not an offset.
 */
export function readPage<V>(db: Database<V, Key>, request: PageRequest): PageEntry<V>[] {
  return [...pageEntries(db, request)];
}

/** `readPage`'s entries one at a time, for a caller that may stop before the page is read whole. */
export function* pageEntries<V>(db: Database<V, Key>, request: PageRequest): Generator<PageEntry<V>> {
  const { prefix, pageSize, after } = request;
  const descending = request.sort === 'desc';
  const low: Key = [...prefix, ''];
  const high: Key = [...prefix, HIGH_KEY];
  const cursor: Key | undefined = after === undefined ? undefined : [...prefix, after];
  const range = descending
    ? db.getRange({ start: cursor ?? high, end: low, reverse: true, limit: pageSize + 1 })
    : db.getRange({ start: cursor ?? low, end: high, limit: pageSize + 1 });
  let read = 0;
  for (const { key, value } of range) {
    const id = (key as Key[])[prefix.length] as string;
    if (id === after) continue;
    yield { id, value };
    if (++read === pageSize) return;
  }
}
