import { HIGH_KEY, type Database, type Key, type Store } from '../../storage/store.js';
import type { Turn } from '../../runtime/runtime.js';
import type { InviteView } from './render.js';

/**
 * `group_invites_by_user` `[appId, groupId, userId, inviteId]`: a group's invites of one user, for
 * the one-pending-invite rule and the `ensured_user_id` filter.
 */
export class InviteIndex {
  private readonly byUser: Database<true, Key>;

  constructor(store: Store) {
    this.byUser = store.db<true>('group_invites_by_user');
  }

  add(turn: Turn, invite: InviteView): void {
    turn.put(this.byUser, this.keyOf(invite), true);
  }

  remove(turn: Turn, invite: InviteView): void {
    turn.del(this.byUser, this.keyOf(invite));
  }

  has(invite: InviteView): boolean {
    return this.byUser.doesExist(this.keyOf(invite));
  }

  /** Committed invite IDs of a user in a group, oldest first. */
  idsOf(appId: string, groupId: string, userId: string): string[] {
    const keys = this.byUser.getKeys({ start: [appId, groupId, userId, ''], end: [appId, groupId, userId, HIGH_KEY] });
    return [...keys].map((key) => (key as Key[])[3] as string);
  }

  private keyOf({ context: c }: InviteView): Key {
    return [c.appId, c.group_id, c.ensured_user_id, c.id];
  }
}
