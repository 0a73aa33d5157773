import type { Deps } from '../../deps.js';
import type { ActorRuntime, Turn } from '../../runtime/runtime.js';
import type { UserDirectory } from '../users/directory.js';
import type { Acting } from './acting.js';
import { GroupEdit } from './edit.js';
import { InviteIndex } from './invite-index.js';
import { runHolding, type Hold } from '../../runtime/holding.js';
import { GroupMemberships } from './memberships.js';
import { GroupNames } from './names.js';
import { InviteLinks } from './invite-links.js';
import { groupLock } from './keys.js';

/** What every groups service shares: the runtime, users and the group feature's own tables. */
export interface GroupsCore {
  runtime: ActorRuntime;
  users: UserDirectory;
  memberships: GroupMemberships;
  invites: InviteIndex;
  names: GroupNames;
  links: InviteLinks;
  /** `<brand>:app_variants`: the attribute an accepted invite's app variant joins. */
  appVariantsKey: string;
}

export function createGroupsCore(deps: Pick<Deps, 'store' | 'runtime' | 'users' | 'profiles' | 'magicLinks' | 'config'>): GroupsCore {
  return {
    appVariantsKey: `${deps.config.names.reservedNamespace}app_variants`,
    runtime: deps.runtime,
    users: deps.users,
    memberships: new GroupMemberships(deps.runtime, deps.profiles, deps.users),
    invites: new InviteIndex(deps.store),
    names: new GroupNames(deps.store),
    links: new InviteLinks(deps.store, deps.magicLinks),
  };
}

/** The 503 of a group turn that kept finding records to lock under heavy churn. */
export const GROUP_BUSY = 'The group is changing too fast; try again';

/**
 * A turn over one group: holds its lock and `locks`, growing the set when the edit asks for more. A
 * user acting (on `/me`) has its session checked again once the turn runs: it may have been signed
 * out, disabled, or deleted and re-created while the request waited for the group. (Its deletion
 * holds this group's lock too, as every `/me` change to a group is made by one of its members.)
 */
export function runEdit<T>(
  core: GroupsCore,
  acting: Acting,
  groupId: string,
  locks: readonly string[],
  body: (edit: GroupEdit, turn: Turn) => T,
): Promise<T> {
  const { appId } = acting;
  return runHolding(core.runtime, [groupLock(appId, groupId), ...locks], (turn, hold: Hold) => {
    if (acting.kind === 'user') core.users.checkCaller(appId, acting);
    return body(new GroupEdit(core, turn, hold, appId, groupId), turn);
  }, GROUP_BUSY);
}
