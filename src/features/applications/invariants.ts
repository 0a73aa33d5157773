import type { Key } from '../../storage/store.js';
import type { Invariant } from '../../verify/invariants.js';

/** What must hold between applications and their credentials. */
export const applicationInvariants: Invariant[] = [
  {
    name: 'app credentials',
    // A credential missing from its app's index still authenticates, yet no listing shows it to revoke.
    check(deps) {
      const problems: string[] = [];
      const credentials = deps.store.db<{ app_id: string }>('credentials');
      const index = deps.store.db<true>('app_credentials');
      for (const { key, value } of credentials.getRange({})) {
        if (!deps.apps.get(value.app_id)) problems.push(`credential ${String(key).slice(0, 8)}… belongs to application ${value.app_id}, which does not exist`);
        if (!index.doesExist([value.app_id, key as string])) problems.push(`credential ${String(key).slice(0, 8)}… of ${value.app_id} is missing from its application's list`);
      }
      for (const key of index.getKeys({})) {
        const [appId, credentialKey] = key as Key[] as [string, string];
        if (credentials.get(credentialKey)?.app_id !== appId) problems.push(`list entry of ${appId} names no credential of it`);
      }
      return problems;
    },
  },
];
