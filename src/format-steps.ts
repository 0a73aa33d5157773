import type { MigrationStep } from './storage/migrations.js';
import { USER_RECORD_MACHINE_VERSION, userReadsAddress, type GroupsSource, type ProfileViews } from './features/users/profile-views.js';
import { format5Upgraded, format6Upgraded } from './features/users/view-record.js';
import type { ActorRuntime, StoredSnapshot } from './runtime/runtime.js';
import { HIGH_KEY, type Key, type Store } from './storage/store.js';
import type { ApplicationStore } from './features/applications/store.js';
import type { UserDirectory } from './features/users/directory.js';
import type { AppSchema } from './features/applications/schemas.js';
import { GROUP_KIND, MEMBER_KIND } from './features/groups/keys.js';
import { renderGroup, renderMember } from './features/groups/render.js';
import { rekeyFormat9InviteIndex } from './features/groups/invite-index.js';
import { renormalizeGroupNames } from './features/groups/names.js';
import { recordFormat11NewestSessions } from './features/sessions/session-store.js';
import type { GroupContext } from '../machines/group.machine.js';
import type { MemberContext } from '../machines/member.machine.js';

/** Read-model databases of format 1, replaced by `user_views`. */
const FORMAT_1_VIEWS = ['profile_views', 'profile_platform', 'profile_me', 'user_access'];

function dropFormat1Views(store: Store): void {
  for (const name of FORMAT_1_VIEWS) if (store.hasDb(name)) store.db(name).dropSync();
}

/** Up to format 4, user snapshots had a table of their own, as other actor kinds still do. */
const FORMAT_4_USERS = 'actor:user';

/** Renders every user's view record from the snapshots of format 4 and before. */
function renderLegacyUsers(store: Store, profiles: ProfileViews, groups: GroupsSource): void {
  if (!store.hasDb(FORMAT_4_USERS)) return;
  for (const { key, value } of store.db<StoredSnapshot>(FORMAT_4_USERS).getRange({})) {
    const [appId, userId] = key as [string, string];
    if (value.v !== USER_RECORD_MACHINE_VERSION) throw new Error(`User snapshot ${appId}/${userId} is version ${value.v}`);
    profiles.rewrite(appId, userId, { state: value.snapshot.value, context: value.snapshot.context }, groups);
  }
}

/** Every user's view record replaced by what `upgrade` makes of it; one it answers undefined for is kept. */
function rewriteRecords(profiles: ProfileViews, upgrade: (record: Buffer) => Buffer | undefined): void {
  for (const key of [...profiles.records.getKeys({})]) {
    // LMDB's reused buffer: the upgrade copies what it keeps before the next read.
    const upgraded = upgrade(profiles.recordOf(key as Key)!);
    if (upgraded) profiles.records.put(key, upgraded);
  }
}

/** Whether the app keeps `email` or `phone_number` from its users: the fields `verified_data` holds. */
const hidesAnAddress = (schema: AppSchema) => !userReadsAddress(schema, 'email') || !userReadsAddress(schema, 'phone');

/** `steps[n]` moves a data dir from format n to n + 1 (FORMAT_VERSION in storage/migrations.ts). */
export function formatSteps(runtime: ActorRuntime, profiles: ProfileViews, apps: ApplicationStore, users: UserDirectory): Record<number, MigrationStep> {
  return {
    // 1 → 2: a user's read model became one record (view-record.ts), rendered by the last step.
    1: dropFormat1Views,
    // 2 → 3: the view record gained a part (its layout changed again in 4, whose step renders it).
    2() {},
    // 3 → 4: groups are rendered once (`group_views`), a profile's entry of a membership holds the
    // member alone, and a view record names its groups: render all of it anew from the snapshots.
    3(store) {
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
      renderLegacyUsers(store, profiles, 'memberships');
    },
    // 4 → 5: a user's view record is also its stored state (ProfileViews.snapshotStore): render
    // each from its snapshot once more, and drop the snapshots' table. Its memberships come from the
    // memberships table, which format 4 kept in step with the records: a format-4 record has six
    // parts, which this build's layout of seven would cut in the wrong places.
    4(store) {
      renderLegacyUsers(store, profiles, 'memberships');
      if (store.hasDb(FORMAT_4_USERS)) {
        // A record is a user from now on: one whose snapshot was gone is dropped, not revived.
        const users = store.db<StoredSnapshot>(FORMAT_4_USERS);
        for (const key of [...profiles.records.getKeys({})]) if (!users.doesExist(key)) profiles.records.remove(key);
        users.dropSync();
      }
      // Steps 1 → 2 before this build looked for these with a check that never found them.
      dropFormat1Views(store);
    },
    // 5 → 6: a view record's access part became binary (view-record.ts). Records the steps before
    // rendered are binary already, in this build's layout: those steps render with this build's code.
    5() {
      rewriteRecords(profiles, format5Upgraded);
    },
    // 6 → 7: a view record gained a last part, its user's member card, taken from the `data` of its
    // platform body; every other part is kept as it was. Records the steps before rendered have it.
    6() {
      rewriteRecords(profiles, format6Upgraded);
    },
    // 7 → 8: a `/me` body's `verified_data` shows only the addresses its user may read, as its `data`
    // does: the records of the users of apps that keep one from them are rendered again; no other
    // record is read.
    7() {
      for (const app of apps.list().filter((app) => hidesAnAddress(app.schema))) {
        const keys = [...profiles.records.getKeys({ start: [app.id, ''], end: [app.id, HIGH_KEY] })];
        for (const [, userId] of keys as Array<[string, string]>) profiles.rewrite(app.id, userId, profiles.storedUser(app.id, userId)!, 'record');
      }
    },
    // 8 → 9: addresses are indexed in Unicode NFC: the entries of those that were not move.
    8() {
      users.renormalizeAddresses();
    },
    // 9 → 10: the invite index is keyed by user first, so deleting a user finds its invites.
    9: rekeyFormat9InviteIndex,
    // 10 → 11: group names are indexed in Unicode NFC, as addresses are: the entries of those that were not move.
    10: renormalizeGroupNames,
    // 11 → 12: each user's newest session ID is kept when the session ends, for sign-out-everywhere to reach its start.
    11: recordFormat11NewestSessions,
  };
}
