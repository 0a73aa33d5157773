import { HIGH_KEY, type Database, type Key, type Store } from '../../storage/store.js';
import type { Turn } from '../../runtime/runtime.js';
import type { InviteView } from './render.js';

export const INVITE_INDEX_DB = 'user_invites';
/** Formats up to 9 keyed the index by group first, `[appId, groupId, userId, inviteId]`. */
const FORMAT_9_INVITE_INDEX_DB = 'group_invites_by_user';

/** A committed invite of a user, by the group it is in. */
export interface InviteOfUser {
  groupId: string;
  inviteId: string;
}

/**
 * `user_invites` `[appId, userId, groupId, inviteId]`: the invites made for a user (its
 * `ensured_user_id`), for the one-pending-invite rule, the `ensured_user_id` filter, and the
 * deletion of a user, which takes every invite of it along.
 */
export class InviteIndex {
  private readonly byUser: Database<true, Key>;

  constructor(store: Store) {
    this.byUser = store.db<true>(INVITE_INDEX_DB);
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
    const keys = this.byUser.getKeys({ start: [appId, userId, groupId, ''], end: [appId, userId, groupId, HIGH_KEY] });
    return [...keys].map((key) => (key as Key[])[3] as string);
  }

  /** Committed invites of a user in every group of its app. */
  ofUser(appId: string, userId: string): InviteOfUser[] {
    const keys = this.byUser.getKeys({ start: [appId, userId, ''], end: [appId, userId, HIGH_KEY] });
    return [...keys].map((key) => ({ groupId: (key as Key[])[2] as string, inviteId: (key as Key[])[3] as string }));
  }

  private keyOf({ context: c }: InviteView): Key {
    return [c.appId, c.ensured_user_id, c.group_id, c.id];
  }
}

/** Format 9 → 10: the index is keyed by user first, so a user's invites in every group are one range. */
export function rekeyFormat9InviteIndex(store: Store): void {
  if (!store.hasDb(FORMAT_9_INVITE_INDEX_DB)) return;
  const legacy = store.db<true>(FORMAT_9_INVITE_INDEX_DB);
  const index = store.db<true>(INVITE_INDEX_DB);
  for (const key of legacy.getKeys({})) {
    const [appId, groupId, userId, inviteId] = key as Key[];
    index.put([appId, userId, groupId, inviteId], true);
  }
  legacy.dropSync();
}
