import type { Key } from '../../storage/store.js';
import type { GroupContext, GroupTally } from '../../../machines/group.machine.js';
import type { MemberContext } from '../../../machines/member.machine.js';
import type { InviteContext } from '../../../machines/invite.machine.js';
import type { LinkRecord } from '../magic-links/link-store.js';
import { counterMatchesRecount, type Invariant } from '../../verify/invariants.js';
import type { Deps } from '../../deps.js';
import { GROUP_KIND, INVITE_KIND, MEMBER_KIND, groupCountKey, isActiveOwner } from './keys.js';
import { renderGroup, renderMember } from './render.js';
import { INVITE_INDEX_DB, InviteIndex } from './invite-index.js';
import { GROUP_NAMES_DB, nameKey } from './names.js';
import { userMadeAt } from '../users/invariants.js';

type Stored<C> = { key: Key[]; state: string; context: C };

function all<C>(deps: Deps, kind: string): Stored<C>[] {
  return [...deps.runtime.table(kind).getKeys({})].map((key) => ({ key: key as Key[], ...deps.runtime.read<C>(kind, key as Key[])! }));
}

const groupIdOf = (key: Key[]) => `${String(key[0])}/${String(key[1])}`;

/** Whether `link` is the one `InviteLinks.issue` made for `invite`. */
const isLinkOf = (link: LinkRecord, c: InviteContext) =>
  link.appId === c.appId &&
  link.userId === c.ensured_user_id &&
  link.purpose.kind === 'invite' &&
  link.purpose.groupId === c.group_id &&
  link.purpose.inviteId === c.id;

/** What must hold between groups, their members and invites, their totals, indexes and what profiles show of them. */
export const groupInvariants: Invariant[] = [
  {
    name: 'group count',
    check(deps) {
      const problems = counterMatchesRecount(deps, 'groups', deps.runtime.table(GROUP_KIND), groupCountKey);
      for (const { context: c } of all<GroupContext>(deps, GROUP_KIND)) {
        if (!deps.apps.get(c.appId)) problems.push(`group ${c.id} belongs to application ${c.appId}, which does not exist`);
      }
      return problems;
    },
  },
  {
    name: 'group totals',
    check(deps) {
      const recount = new Map<string, GroupTally>();
      const tallyOf = (key: Key[]) => {
        const id = groupIdOf(key);
        if (!recount.has(id)) recount.set(id, { active: 0, owners: 0, members: 0, invites: 0 });
        return recount.get(id)!;
      };
      const problems: string[] = [];
      for (const member of all<MemberContext>(deps, MEMBER_KIND)) {
        const tally = tallyOf(member.key);
        tally.members++;
        if (member.state === 'active') tally.active++;
        if (isActiveOwner(member)) tally.owners++;
      }
      for (const invite of all<InviteContext>(deps, INVITE_KIND)) tallyOf(invite.key).invites++;
      const groups = all<GroupContext>(deps, GROUP_KIND);
      for (const group of groups) {
        const found = recount.get(groupIdOf(group.key)) ?? { active: 0, owners: 0, members: 0, invites: 0 };
        if (JSON.stringify(found) !== JSON.stringify(group.context.tally)) {
          problems.push(`group ${group.context.id} says ${JSON.stringify(group.context.tally)}, recount finds ${JSON.stringify(found)}`);
        }
      }
      const known = new Set(groups.map((g) => groupIdOf(g.key)));
      for (const id of recount.keys()) if (!known.has(id)) problems.push(`members or invites of missing group ${id}`);
      return problems;
    },
  },
  {
    name: 'pending invites and members',
    check(deps) {
      const problems: string[] = [];
      const pendingByUser = new Set<string>();
      const index = new InviteIndex(deps.store);
      for (const invite of all<InviteContext>(deps, INVITE_KIND)) {
        const c = invite.context;
        if (!index.has(invite)) problems.push(`invite ${c.id} is not indexed under its user`);
        if (invite.state !== 'pending') continue;
        const slot = `${c.appId}/${c.group_id}/${c.ensured_user_id}`;
        if (pendingByUser.has(slot)) problems.push(`user ${c.ensured_user_id} has two pending invites to ${c.group_id}`);
        pendingByUser.add(slot);
        const member = deps.runtime.read<MemberContext>(MEMBER_KIND, [c.appId, c.group_id, c.member_id]);
        if (member?.state !== 'invite_pending' || member.context.invite_id !== c.id) {
          problems.push(`pending invite ${c.id} has no invite_pending member of its own`);
        }
      }
      return problems;
    },
  },
  {
    name: 'invited users',
    // An invite's user was made or found when it was made: one gone, or made after it (deleted and made
    // again under its ID), is not the invited user. Builds before format 10 kept answered invites of deleted users.
    check(deps) {
      const problems: string[] = [];
      for (const { context: c } of all<InviteContext>(deps, INVITE_KIND)) {
        const madeAt = userMadeAt(deps, c.appId, c.ensured_user_id);
        if (madeAt === undefined) problems.push(`invite ${c.id} names user ${c.ensured_user_id}, which does not exist`);
        else if (madeAt !== null && madeAt > Date.parse(c.created_at)) {
          problems.push(`invite ${c.id} names user ${c.ensured_user_id}, made after the invite`);
        }
      }
      return problems;
    },
  },
  {
    name: 'group indexes',
    // Lookups trust them: an entry naming a missing group or invite answers 404 to a list.
    check(deps) {
      const problems: string[] = [];
      const named = new Set<string>();
      for (const key of deps.store.db(GROUP_NAMES_DB).getKeys({})) {
        const [appId, name, groupId] = key as [string, string, string];
        named.add(JSON.stringify([appId, groupId]));
        const group = deps.runtime.read<GroupContext>(GROUP_KIND, [appId, groupId]);
        if (group === undefined || nameKey(group.context.name) !== name) problems.push(`name entry ${JSON.stringify(key)} does not name its group`);
      }
      for (const group of all<GroupContext>(deps, GROUP_KIND)) {
        if (!named.has(JSON.stringify(group.key))) problems.push(`group ${group.context.id} has no name entry`);
      }
      for (const key of deps.store.db(INVITE_INDEX_DB).getKeys({})) {
        const [appId, userId, groupId, inviteId] = key as [string, string, string, string];
        const invite = deps.runtime.read<InviteContext>(INVITE_KIND, [appId, groupId, inviteId]);
        if (invite?.context.ensured_user_id !== userId) problems.push(`invite index entry ${JSON.stringify(key)} names no invite of that user`);
      }
      return problems;
    },
  },
  {
    name: 'invite links',
    // Answering an invite (on `/me` or by redeeming its link) or deleting it drops this entry. Older
    // builds kept the entry of an invite accepted through its link, so a data dir may still hold one:
    // it is healthy while that link is spent. A link pruned long after its expiry is not judged.
    check(deps) {
      const problems: string[] = [];
      const links = deps.store.db<LinkRecord>('magic_links');
      for (const { key, value: ref } of deps.store.db<string>('invite_links').getRange({})) {
        const [appId, groupId, inviteId] = key as [string, string, string];
        const invite = deps.runtime.read<InviteContext>(INVITE_KIND, [appId, groupId, inviteId]);
        if (!invite) {
          problems.push(`link entry ${JSON.stringify(key)} names no invite`);
          continue;
        }
        if (invite.state === 'rejected') problems.push(`rejected invite ${inviteId} still has a link entry`);
        const link = links.get(ref);
        if (!link) continue;
        // Killing the invite revokes whatever link the entry names.
        if (!isLinkOf(link, invite.context)) problems.push(`the link entry of invite ${inviteId} names a link made for something else`);
        else if ((link.state === 'used') !== (invite.state === 'accepted')) {
          problems.push(`invite ${inviteId} is ${invite.state} while its link is ${link.state}`);
        }
      }
      return problems;
    },
  },
  {
    name: 'profile groups',
    check(deps) {
      const problems: string[] = [];
      const { memberships, groupViews } = deps.profiles;
      const expected = new Set<string>();
      for (const member of all<MemberContext>(deps, MEMBER_KIND)) {
        const c = member.context;
        const key: Key = [c.appId, c.user_id, c.group_id];
        expected.add(JSON.stringify(key));
        const stored = memberships.get(key);
        if (!deps.users.exists(c.appId, c.user_id)) problems.push(`member ${c.id} belongs to user ${c.user_id}, which does not exist`);
        if (!stored) problems.push(`member ${c.id} has no entry in its user's profile`);
        else if (JSON.stringify(stored) !== JSON.stringify(renderMember(member))) problems.push(`the profile entry of member ${c.id} is stale`);
      }
      for (const key of memberships.getKeys({})) {
        if (!expected.has(JSON.stringify(key))) problems.push(`profile entry ${JSON.stringify(key)} belongs to no member`);
      }
      const groups = new Set<string>();
      for (const group of all<GroupContext>(deps, GROUP_KIND)) {
        groups.add(JSON.stringify(group.key));
        const stored = groupViews.getBinary(group.key)?.toString('utf8');
        if (stored !== JSON.stringify(renderGroup(group))) problems.push(`the rendering of group ${group.context.id} is ${stored ? 'stale' : 'missing'}`);
      }
      for (const key of groupViews.getKeys({})) {
        if (!groups.has(JSON.stringify(key))) problems.push(`group rendering ${JSON.stringify(key)} belongs to no group`);
      }
      return problems;
    },
  },
];
