import { listBytes } from '../../http/list-bytes.js';
import { addressKindOf, distinctAddresses } from './addresses.js';
import type { UserDirectory } from './directory.js';
import type { ProfileViews } from './profile-views.js';
import type { ListQuery } from './schemas.js';

/**
 * `GET /applications/{app}/users/data` as JSON bytes: unfiltered lists page the profile read model
 * with an O(1) total; filters resolve their (bounded) matches through the address index and IDs.
 */
export function listProfiles(users: UserDirectory, profiles: ProfileViews, appId: string, query: ListQuery): Buffer {
  const request = { pageSize: query.pageSize, after: query.after, sort: query.sort };
  let total: number;
  let page: Iterable<Uint8Array>;
  if (query.lookup_filter === undefined && query.id_filter === undefined) {
    total = users.count(appId);
    page = profiles.platformPage(appId, request);
  } else {
    const matches = filteredIds(users, appId, query);
    if (query.sort === 'desc') matches.reverse();
    total = matches.length;
    const after = query.after;
    const start = after === undefined ? 0 : matches.findIndex((id) => (query.sort === 'desc' ? id < after : id > after));
    page = bodiesOf(profiles, appId, start < 0 ? [] : matches.slice(start, start + query.pageSize));
  }
  const fields = query.fields;
  const serialize = fields ? (body: Uint8Array) => Buffer.from(JSON.stringify(projectProfile(body, fields))) : (body: Uint8Array) => body;
  return listBytes(total, page, serialize, 'profiles');
}

function* bodiesOf(profiles: ProfileViews, appId: string, ids: readonly string[]): Generator<Uint8Array> {
  for (const id of ids) {
    const body = profiles.platformBytes(appId, id);
    if (body) yield body;
  }
}

/**
 * IDs matching every given filter, ascending. Without `include_duplicates`, only the oldest user per
 * lookup value among those `id_filter` lists: a listed holder is found though an older one is not listed.
 */
function filteredIds(users: UserDirectory, appId: string, query: ListQuery): string[] {
  const listed = query.id_filter && new Set(query.id_filter.filter((id) => users.exists(appId, id)));
  let matches = listed;
  if (query.lookup_filter) {
    matches = new Set();
    for (const value of distinctAddresses(query.lookup_filter)) {
      const holders = users.findByAddress(appId, addressKindOf(value), value).filter((id) => !listed || listed.has(id));
      for (const id of query.include_duplicates ? holders : holders.slice(0, 1)) matches.add(id);
    }
  }
  // Plain string order is the byte order of the ASCII IDs in LMDB, so cursors mean the same everywhere.
  return [...(matches ?? [])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A profile whose `data` keeps only `fields` (and always `user_id`). */
export function projectProfile(bytes: Uint8Array, fields: readonly string[]): Record<string, unknown> {
  const profile = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  const data = profile.data as Record<string, unknown>;
  const kept: Record<string, unknown> = { user_id: data.user_id };
  for (const name of fields) if (Object.hasOwn(data, name)) kept[name] = data[name];
  return { ...profile, data: kept };
}
