import { HIGH_KEY, type Database, type Key, type Store } from '../../storage/store.js';
import type { Turn } from '../../runtime/runtime.js';

export const GROUP_NAMES_DB = 'group_names';

/** A name as the index keys it: without letter case, in Unicode NFC (as addresses compare), so `é` written either way is one name. */
export const nameKey = (name: string) => name.toLowerCase().normalize('NFC');

/**
 * The most UTF-8 bytes of a name's key: what 200 UTF-16 units of any text fold to (6 bytes a unit at
 * most), so every name stored has fit; well within LMDB's key size (1 978 bytes) beside the IDs. A name
 * of 200 characters may fold to twice that (a few musical symbols decompose to three of 4 bytes each).
 */
const NAME_KEY_BYTES = 1200;

/** Whether the index can key `name` (its key is ready to put). */
const keyFits = (key: string) => Buffer.byteLength(key) <= NAME_KEY_BYTES;

/** Whether a group may be named `name`: its key fits the index. */
export const fitsNameIndex = (name: string) => keyFits(nameKey(name));

/** `group_names` `[appId, name key, groupId]`: the name match of `lookup_filter`. */
export class GroupNames {
  private readonly byName: Database<true, Key>;

  constructor(store: Store) {
    this.byName = store.db<true>(GROUP_NAMES_DB);
  }

  add(turn: Turn, appId: string, groupId: string, name: string): void {
    turn.put(this.byName, [appId, nameKey(name), groupId], true);
  }

  remove(turn: Turn, appId: string, groupId: string, name: string): void {
    turn.del(this.byName, [appId, nameKey(name), groupId]);
  }

  idsNamed(appId: string, name: string): string[] {
    const key = nameKey(name);
    // No group can hold a name the index cannot key.
    if (!keyFits(key)) return [];
    const keys = this.byName.getKeys({ start: [appId, key, ''], end: [appId, key, HIGH_KEY] });
    return [...keys].map((key) => (key as Key[])[2] as string);
  }
}

/** Format 10 → 11: names were keyed lower-cased as written; the entries of names not in NFC move to their key now. */
export function renormalizeGroupNames(store: Store): void {
  if (!store.hasDb(GROUP_NAMES_DB)) return;
  const index = store.db<true>(GROUP_NAMES_DB);
  const moved = [...index.getKeys({}).filter((key) => nameKey((key as Key[])[1] as string) !== (key as Key[])[1])];
  for (const key of moved) {
    const [appId, name, groupId] = key as [string, string, string];
    index.remove(key);
    index.put([appId, nameKey(name), groupId], true);
  }
}
