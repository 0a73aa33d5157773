import { newId } from '../../lib/ids.js';
import { jsonEqual } from '../../lib/json-equal.js';
import { userLock } from '../users/directory.js';
import type { GroupContext, GroupInput } from '../../../machines/group.machine.js';
import { authorOf, partyOf, type Acting } from './acting.js';
import { runEdit, type GroupsCore } from './core.js';
import { GroupEdit } from './edit.js';
import { GROUP_KIND, INVITE_KIND, MEMBER_KIND, OWNER_ROLE, groupCountKey, groupKey, groupLock, idsInGroup, memberLock } from './keys.js';
import { fixedHold } from '../../runtime/holding.js';
import type { GroupView, MemberView } from './render.js';
import type { GroupBody, GroupUpdateBody } from './schemas.js';
import type * as v from 'valibot';

type GroupFields = v.InferOutput<typeof GroupBody>;
type GroupUpdate = v.InferOutput<typeof GroupUpdateBody>;

/** Creating, changing and deleting groups. */
export class GroupService {
  constructor(private readonly core: GroupsCore) {}

  /**
   * A new group; a user who creates one becomes its first member, `active`, with `["owner"]`. Its IDs
   * are drawn once the turn holds its creator: drawn before, a group that waited for a busy creator
   * would sort before groups committed ahead of it.
   */
  async create(acting: Acting, fields: GroupFields): Promise<{ group: GroupView; member?: MemberView }> {
    const { appId } = acting;
    // A user's own lock too: its deletion must not miss the member it is becoming.
    const creator = acting.kind === 'user' ? [userLock(appId, acting.userId)] : [];
    return this.core.runtime.run(creator, (turn) => {
      if (acting.kind === 'user') this.core.users.requireCaller(turn, appId, acting);
      const { groupId, memberId } = turn.lockNew(
        () => ({ groupId: newId('group'), memberId: newId('member') }),
        (ids) => [groupLock(appId, ids.groupId), memberLock(appId, ids.groupId, ids.memberId)],
      );
      turn.create<GroupContext>(GROUP_KIND, groupKey(appId, groupId), {
        appId,
        id: groupId,
        ...fields,
        by: authorOf(acting),
        at: turn.now,
      } satisfies GroupInput);
      this.core.names.add(turn, appId, groupId, fields.name);
      turn.count(groupCountKey(appId), 1);
      const edit = new GroupEdit(this.core, turn, fixedHold(turn), appId, groupId);
      const member =
        acting.kind === 'user'
          ? edit.addMember(memberId, { userId: acting.userId, roles: [OWNER_ROLE], state: 'active', addedBy: partyOf(acting) })
          : undefined;
      return { group: edit.finish(), member };
    });
  }

  /**
   * Replaces a group's fields, an absent name keeping the group's; a user (an owner) also gets its own
   * member, which the group's lock kept still. A body that leaves every field as stored writes nothing.
   */
  async update(acting: Acting, groupId: string, fields: GroupUpdate): Promise<{ group: GroupView; member?: MemberView }> {
    const { appId } = acting;
    return runEdit(this.core, acting, groupId, [], (edit, turn) => {
      const member = acting.kind === 'user' ? edit.requireOwner(acting.userId) : undefined;
      const stored = edit.group.context;
      const current = stored.name;
      const name = fields.name ?? current;
      // Nothing to change is nothing to write: updated_at and updated_by keep meaning "last changed".
      if (name === current && fields.admission_policy === stored.admission_policy && jsonEqual(fields.meta, stored.meta)) {
        return { group: edit.group, member };
      }
      if (name !== current) {
        this.core.names.remove(turn, appId, groupId, current);
        this.core.names.add(turn, appId, groupId, name);
      }
      edit.updateGroup({ type: 'group.update', ...fields, name, by: authorOf(acting), at: turn.now });
      return { group: edit.finish(), member };
    });
  }

  /** Deletes a group with all its members and invites (their links die, their users' profiles drop it). */
  async remove(acting: Acting, groupId: string): Promise<void> {
    const { appId } = acting;
    await runEdit(this.core, acting, groupId, [], (edit, turn) => {
      if (acting.kind === 'user') edit.requireOwner(acting.userId);
      const { runtime } = this.core;
      edit.deleteGroup(idsInGroup(runtime, MEMBER_KIND, appId, groupId), idsInGroup(runtime, INVITE_KIND, appId, groupId));
      this.core.names.remove(turn, appId, groupId, edit.group.context.name);
      turn.count(groupCountKey(appId), -1);
    });
  }

}
