import type { MigrationStep } from './storage/migrations.js';
import type { ProfileViews } from './features/users/profile-views.js';
import type { ActorRuntime } from './runtime/runtime.js';
import type { Key } from './storage/store.js';
import { USER_KIND } from './features/users/directory.js';
import { GROUP_KIND, MEMBER_KIND } from './features/groups/keys.js';
import { renderGroup, renderMember } from './features/groups/render.js';
import type { GroupContext } from '../machines/group.machine.js';
import type { MemberContext } from '../machines/member.machine.js';

/** Read-model databases of format 1, replaced by `user_views`. */
const FORMAT_1_VIEWS = ['profile_views', 'profile_platform', 'profile_me', 'user_access'];

/** `steps[n]` moves a data dir from format n to n + 1 (FORMAT_VERSION in storage/migrations.ts). */
export function formatSteps(runtime: ActorRuntime, profiles: ProfileViews): Record<number, MigrationStep> {
  return {
    // 1 → 2: a user's read model became one record (view-record.ts), rendered by the last step.
    1(store) {
      for (const name of FORMAT_1_VIEWS) if (store.root.doesExist(name)) store.db(name).dropSync();
    },
    // 2 → 3: the view record gained a part (its layout changed again in 4, whose step renders it).
    2() {},
    // 3 → 4: groups are rendered once (`group_views`), a profile's entry of a membership holds the
    // member alone, and a view record names its groups: render all of it anew from the snapshots.
    3() {
      for (const key of [...profiles.memberships.getKeys({})]) profiles.memberships.remove(key);
      for (const key of runtime.table(MEMBER_KIND).getKeys({})) {
        const member = runtime.read<MemberContext>(MEMBER_KIND, key as Key[])!;
        const { appId, user_id, group_id } = member.context;
        profiles.memberships.put([appId, user_id, group_id], renderMember(member));
      }
      for (const key of runtime.table(GROUP_KIND).getKeys({})) {
        const group = runtime.read<GroupContext>(GROUP_KIND, key as Key[])!;
        profiles.groupViews.put(key, Buffer.from(JSON.stringify(renderGroup(group))));
      }
      for (const key of runtime.table(USER_KIND).getKeys({})) {
        const [appId, userId] = key as [string, string];
        profiles.rewrite(appId, userId);
      }
    },
  };
}
