import type { Invariant } from '../../verify/invariants.js';
import type { Key } from '../../storage/store.js';
import type { LinkRecord } from './link-store.js';
import { userMadeAt } from '../users/invariants.js';

/** Every magic link is of an existing user and indexed under it, and every index entry names a link (see MagicLinks). */
export const magicLinkInvariants: Invariant[] = [
  {
    name: 'magic link index',
    check(deps) {
      const problems: string[] = [];
      const links = deps.store.db<LinkRecord>('magic_links');
      const byUser = deps.store.db<true>('user_magic_links');
      for (const { key, value } of links.getRange({})) {
        if (!byUser.doesExist([value.appId, value.userId, value.expiresAt, key as string])) {
          problems.push(`a link of user ${value.userId} of ${value.appId} is not indexed`);
        }
        // A link is made for a user it ensures, and deleting the user forgets its links.
        const madeAt = userMadeAt(deps, value.appId, value.userId);
        if (madeAt === undefined) problems.push(`a link of user ${value.userId} of ${value.appId}, which does not exist`);
        else if (madeAt !== null && value.createdAt < madeAt) {
          problems.push(`a link of user ${value.userId} of ${value.appId} was made before that user`);
        }
      }
      for (const key of byUser.getKeys({})) {
        const [appId, userId, expiresAt, ref] = key as Key[];
        const link = links.get(ref);
        if (!link || link.appId !== appId || link.userId !== userId || link.expiresAt !== expiresAt) {
          problems.push(`index entry of user ${String(userId)} of ${String(appId)} names no such link`);
        }
      }
      return problems;
    },
  },
];
