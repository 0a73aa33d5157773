import { isDeepStrictEqual } from 'node:util';
import type { Key } from '../../storage/store.js';
import { sessionMarksOf } from '../../auth/revocation.js';
import { counterMatchesRecount, type Invariant } from '../../verify/invariants.js';
import { addressesOf } from './addresses.js';
import { holdsFile, isFileDescriptor } from './profile-files.js';
import { fieldSpec } from '../applications/schemas.js';
import { encodeGroupEntries } from './view-record.js';
import { USER_LOOKUP_DB, userCountKey, type UserView } from './directory.js';
import type { Deps } from '../../deps.js';

/** Every user record, read back as its user, or the reason it cannot be. */
function* storedUsers(deps: Deps): Generator<{ appId: string; userId: string; user?: UserView; error?: string }> {
  for (const key of deps.profiles.records.getKeys({})) {
    const [appId, userId] = key as [string, string];
    let read: { user?: UserView; error?: string };
    try {
      read = { user: deps.users.get(appId, userId) };
    } catch (error) {
      read = { error: (error as Error).message };
    }
    yield { appId, userId, ...read };
  }
}

/** When a user was made: undefined when there is no such user, null when its record is unreadable (the read-model check reports it). */
export function userMadeAt(deps: Deps, appId: string, userId: string): number | null | undefined {
  try {
    const user = deps.users.get(appId, userId);
    return user && Date.parse(user.context.meta.created);
  } catch {
    return null;
  }
}

/** What must hold between user records, their count, their lookup index and their read model. */
export const userInvariants: Invariant[] = [
  {
    name: 'user count',
    check: (deps) => counterMatchesRecount(deps, 'users', deps.profiles.records, userCountKey),
  },
  {
    name: 'user lookup index',
    check(deps) {
      const problems: string[] = [];
      const lookup = deps.store.db<true>(USER_LOOKUP_DB);
      const expected = new Set<string>();
      // An unreadable record is reported by the read-model check; its user's entries are not judged.
      const unreadable = new Set<string>();
      for (const { appId, userId, user } of storedUsers(deps)) {
        if (!user) {
          unreadable.add(JSON.stringify([appId, userId]));
          continue;
        }
        const c = user.context;
        for (const [kind, address] of addressesOf(c.data, c.verified_data)) {
          const key: Key = [c.appId, kind, address, Date.parse(c.meta.created), c.id];
          expected.add(JSON.stringify(key));
          if (!lookup.doesExist(key)) problems.push(`user ${c.id} of ${c.appId} is not indexed under ${kind} ${address}`);
        }
      }
      for (const key of lookup.getKeys({})) {
        const [appId, , , , userId] = key as Key[];
        if (expected.has(JSON.stringify(key)) || unreadable.has(JSON.stringify([appId, userId]))) continue;
        problems.push(`index entry ${JSON.stringify(key)} names no such user address`);
      }
      return problems;
    },
  },
  {
    // A record is also the user's stored state: what it serves must be what that state renders to.
    name: 'profile read model',
    check(deps) {
      const problems: string[] = [];
      for (const { appId, userId, user, error } of storedUsers(deps)) {
        if (!user) {
          problems.push(`record of ${userId} of ${appId} is unreadable: ${error}`);
          continue;
        }
        const app = deps.apps.get(appId);
        if (!app) {
          problems.push(`user ${userId} belongs to application ${appId}, which does not exist`);
          continue;
        }
        const prepared = deps.profiles.platformBytes(appId, userId)!;
        const { platformHead, meHead, tail, card } = deps.profiles.renderBodies(user, app.schema);
        const groups = deps.profiles.groupsJson(appId, userId);
        const access = deps.profiles.signedInView(appId, userId)?.access;
        const listed = encodeGroupEntries(deps.profiles.groupEntries(appId, userId));
        if (Buffer.from(prepared).toString('utf8') !== platformHead + groups + tail) problems.push(`prepared profile of ${userId} is stale`);
        // Stale-stamped /me heads are rendered again as they are read: only a current one must match.
        else if (deps.profiles.meBytes(appId, userId)!.toString('utf8') !== meHead + groups + tail) {
          problems.push(`prepared /me profile of ${userId} of ${appId} is stale`);
        } else if (!deps.profiles.storedGroups(appId, userId)!.equals(listed)) problems.push(`stored groups of ${userId} of ${appId} are stale`);
        else if (!isDeepStrictEqual(access, { state: user.state, ...sessionMarksOf(user.context) })) {
          problems.push(`access marks of ${userId} of ${appId} are stale`);
        } else if (deps.profiles.storedCard(appId, userId) !== card) problems.push(`member card of ${userId} of ${appId} is stale`);
      }
      return problems;
    },
  },
  {
    name: 'profile files',
    // Profile writes rely on it: they look for files to drop among the descriptors in `data`.
    check(deps) {
      const problems: string[] = [];
      const files = deps.store.db<{ sha256: string }>('user_files');
      for (const { key, value } of files.getRange({})) {
        const [appId, userId, field] = key as [string, string, string];
        const described = deps.users.get(appId, userId)?.context.data[field];
        if (!isFileDescriptor(described) || described.sha256 !== value.sha256) {
          problems.push(`stored file ${field} of ${userId} of ${appId} is not what its profile describes`);
        }
      }
      for (const { appId, userId, user } of storedUsers(deps)) {
        const schema = deps.apps.get(appId)?.schema;
        if (!schema) continue;
        for (const [field, value] of Object.entries(user?.context.data ?? {})) {
          if (holdsFile(fieldSpec(schema, field), value) && files.get([appId, userId, field])?.sha256 !== value.sha256) {
            problems.push(`file ${field} of ${userId} of ${appId} is described in its profile but not stored`);
          }
        }
      }
      // A preview is kept only while its file holds the bytes it was drawn from: dropping or replacing the file drops it.
      for (const { key, value } of deps.store.db<{ sha256: string }>('user_file_previews').getRange({})) {
        const [appId, userId, field, size] = key as [string, string, string, string];
        if (files.get([appId, userId, field])?.sha256 !== value.sha256) {
          problems.push(`preview ${size} of ${field} of ${userId} of ${appId} is not of a stored file`);
        }
      }
      return problems;
    },
  },
];
