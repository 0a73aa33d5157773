import { forbidden, notFound } from '../../lib/errors.js';
import { readPage } from '../../storage/paging.js';
import { addressKindOf, distinctAddresses, type AddressKind } from '../users/addresses.js';
import type { MemberEntry } from '../users/profile-views.js';
import type { GroupContext } from '../../../machines/group.machine.js';
import type { MemberContext } from '../../../machines/member.machine.js';
import type { InviteContext } from '../../../machines/invite.machine.js';
import type { GroupsCore } from './core.js';
import { GROUP_KIND, INVITE_KIND, MEMBER_KIND, groupCountKey, groupKey, inviteKey, memberKey } from './keys.js';
import type { GroupView, InviteView, MemberView } from './render.js';
import type { ListQuery } from './schemas.js';
import { HIGH_KEY, type Key } from '../../storage/store.js';

export interface Page<T> {
  total: number;
  items: T[];
}

/** IDs sorted in creation order, then the page after `after`. */
function pageOfIds(ids: Iterable<string>, query: ListQuery): Page<string> {
  const sorted = [...new Set(ids)].sort();
  const start = query.after === undefined ? 0 : sorted.findIndex((id) => id > query.after!);
  return { total: sorted.length, items: start < 0 ? [] : sorted.slice(start, start + query.pageSize) };
}

/** The page request of a list by its key prefix. */
const pageRequest = (prefix: Key[], query: ListQuery) => ({ prefix, pageSize: query.pageSize, after: query.after });

/** Committed reads of groups, members and invites: no actor is activated to answer them. */
export class GroupReads {
  constructor(private readonly core: GroupsCore) {}

  group(appId: string, groupId: string): GroupView {
    const group = this.core.runtime.read<GroupContext>(GROUP_KIND, groupKey(appId, groupId));
    if (!group) throw notFound('group', groupId);
    return group;
  }

  member(appId: string, groupId: string, memberId: string): MemberView {
    this.group(appId, groupId);
    return this.memberOfGroup(appId, groupId, memberId);
  }

  invite(appId: string, groupId: string, inviteId: string): InviteView {
    this.group(appId, groupId);
    return this.inviteOfGroup(appId, groupId, inviteId);
  }

  /** A member of a group already known to exist (a list reads the group once, not per row). */
  private memberOfGroup(appId: string, groupId: string, memberId: string): MemberView {
    const member = this.core.runtime.read<MemberContext>(MEMBER_KIND, memberKey(appId, groupId, memberId));
    if (!member) throw notFound('member', memberId);
    return member;
  }

  private inviteOfGroup(appId: string, groupId: string, inviteId: string): InviteView {
    const invite = this.core.runtime.read<InviteContext>(INVITE_KIND, inviteKey(appId, groupId, inviteId));
    if (!invite) throw notFound('invite', inviteId);
    return invite;
  }

  memberOfUser(appId: string, groupId: string, userId: string): MemberView | undefined {
    const memberId = this.core.memberships.memberIdOf(appId, userId, groupId);
    return memberId === undefined ? undefined : this.core.runtime.read<MemberContext>(MEMBER_KIND, memberKey(appId, groupId, memberId));
  }

  /** A group as its member sees it: 404 for anyone without a member record (any state). */
  visibleGroup(appId: string, groupId: string, userId: string): { group: GroupView; member: MemberView } {
    const member = this.memberOfUser(appId, groupId, userId);
    if (!member) throw notFound('group', groupId);
    return { group: this.group(appId, groupId), member };
  }

  /** 403 unless the user is an active member (what member lists and other members' records need). */
  requireActiveMember(appId: string, groupId: string, userId: string): { group: GroupView; member: MemberView } {
    const seen = this.visibleGroup(appId, groupId, userId);
    if (seen.member.state !== 'active') throw forbidden('Only active members may see the members of a group');
    return seen;
  }

  /** An app's groups; `lookup_filter` values match a group ID or, case-insensitively, a name. */
  groups(appId: string, query: ListQuery): Page<GroupView> {
    const { runtime, names } = this.core;
    if (!query.lookup_filter) {
      return { total: runtime.counter(groupCountKey(appId)), items: runtime.readPage<GroupContext>(GROUP_KIND, pageRequest([appId], query)) };
    }
    const page = pageOfIds(
      query.lookup_filter.flatMap((value) => [
        ...(runtime.table(GROUP_KIND).doesExist(groupKey(appId, value)) ? [value] : []),
        ...names.idsNamed(appId, value),
      ]),
      query,
    );
    return { total: page.total, items: page.items.map((id) => this.group(appId, id)) };
  }

  /**
   * The groups in which a user has a member record, with that member: as its profile's `groups`
   * lists them (the member without `profile`), from the stored renderings, so no group or member
   * actor is read.
   */
  groupsOfUser(appId: string, userId: string, query: ListQuery): Page<{ group: Record<string, unknown>; member: MemberEntry }> {
    const { memberships } = this.core;
    const db = memberships.table;
    const total = db.getKeysCount({ start: [appId, userId, ''], end: [appId, userId, HIGH_KEY] });
    const items = readPage(db, pageRequest([appId, userId], query)).flatMap(({ id, value }) => {
      const group = memberships.renderedGroup(appId, id);
      return group ? [{ group, member: value }] : [];
    });
    return { total, items };
  }

  /**
   * A group's members; `lookup_filter` values match a user ID, or an email or phone for the kinds
   * `searchable` allows (a reader may not find members by an address it may not read).
   */
  members(appId: string, groupId: string, query: ListQuery, searchable: (kind: AddressKind) => boolean): Page<MemberView> {
    const group = this.group(appId, groupId);
    const { runtime, users, memberships } = this.core;
    const byAddress = (value: string) => {
      const kind = addressKindOf(value);
      return searchable(kind) ? users.findByAddress(appId, kind, value) : [];
    };
    if (!query.lookup_filter) {
      return { total: group.context.tally.members, items: runtime.readPage<MemberContext>(MEMBER_KIND, pageRequest([appId, groupId], query)) };
    }
    // A value is tried as a user ID as written (IDs are case-sensitive), and as an address once however written.
    const userIds = [...query.lookup_filter, ...distinctAddresses(query.lookup_filter).flatMap(byAddress)];
    const page = pageOfIds(
      [...new Set(userIds)].flatMap((userId) => memberships.memberIdOf(appId, userId, groupId) ?? []),
      query,
    );
    return { total: page.total, items: page.items.map((id) => this.memberOfGroup(appId, groupId, id)) };
  }

  /** A group's invites; `ensured_user_id` keeps those of one user. */
  invites(appId: string, groupId: string, query: ListQuery): Page<InviteView> {
    const group = this.group(appId, groupId);
    const { runtime, invites } = this.core;
    if (!query.ensured_user_id) {
      return { total: group.context.tally.invites, items: runtime.readPage<InviteContext>(INVITE_KIND, pageRequest([appId, groupId], query)) };
    }
    const page = pageOfIds(invites.idsOf(appId, groupId, query.ensured_user_id), query);
    return { total: page.total, items: page.items.map((id) => this.inviteOfGroup(appId, groupId, id)) };
  }
}
