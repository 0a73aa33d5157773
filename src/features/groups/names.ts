import { HIGH_KEY, type Database, type Key, type Store } from '../../storage/store.js';
import type { Turn } from '../../runtime/runtime.js';

/** `group_names` `[appId, lowercased name, groupId]`: the case-insensitive name match of `lookup_filter`. */
export class GroupNames {
  private readonly byName: Database<true, Key>;

  constructor(store: Store) {
    this.byName = store.db<true>('group_names');
  }

  add(turn: Turn, appId: string, groupId: string, name: string): void {
    turn.put(this.byName, [appId, name.toLowerCase(), groupId], true);
  }

  remove(turn: Turn, appId: string, groupId: string, name: string): void {
    turn.del(this.byName, [appId, name.toLowerCase(), groupId]);
  }

  idsNamed(appId: string, name: string): string[] {
    const lower = name.toLowerCase();
    const keys = this.byName.getKeys({ start: [appId, lower, ''], end: [appId, lower, HIGH_KEY] });
    return [...keys].map((key) => (key as Key[])[2] as string);
  }
}
