import type { MigrationStep } from './storage/migrations.js';
import type { ProfileViews } from './features/users/profile-views.js';
import type { ActorRuntime } from './runtime/runtime.js';
import { USER_KIND } from './features/users/directory.js';

/** Read-model databases of format 1, replaced by `user_views`. */
const FORMAT_1_VIEWS = ['profile_views', 'profile_platform', 'profile_me', 'user_access'];

/** `steps[n]` moves a data dir from format n to n + 1 (FORMAT_VERSION in storage/migrations.ts). */
export function formatSteps(runtime: ActorRuntime, profiles: ProfileViews): Record<number, MigrationStep> {
  return {
    // 1 → 2: a user's read model became one record (view-record.ts): render every user's anew.
    1(store) {
      for (const name of FORMAT_1_VIEWS) if (store.root.doesExist(name)) store.db(name).dropSync();
      renderEveryUser();
    },
    // 2 → 3: view records gained the user's groups as their own part.
    2: renderEveryUser,
  };

  function renderEveryUser() {
    for (const key of runtime.table(USER_KIND).getKeys({})) {
      const [appId, userId] = key as [string, string];
      profiles.rewrite(appId, userId);
    }
  }
}
