import { counterMatchesRecount, type Invariant } from '../../verify/invariants.js';
import type { StoredCredential } from './credentials.js';
import { clientCount, type StoredClient } from './service.js';

export const oidcClientInvariants: Invariant[] = [
  {
    name: 'oidc client count',
    check: (deps) => counterMatchesRecount(deps, 'oidc clients', deps.store.db('oidc_clients'), clientCount),
  },
  {
    name: 'oidc credentials',
    // Credentials are listed and deleted through their client's key range, by the ID they hold, and
    // answered with the app they hold: each must agree with its key, as must each client. A client may have none.
    check(deps) {
      const problems: string[] = [];
      const clients = deps.store.db<StoredClient>('oidc_clients');
      for (const { key, value } of clients.getRange({})) {
        const [appId, clientId] = key as [string, string];
        if (!deps.apps.get(appId)) problems.push(`client ${clientId} belongs to application ${appId}, which does not exist`);
        // A client is answered as stored, and its credentials are written under the app and ID it holds.
        if (value.id !== clientId || value.app_id !== appId) problems.push(`client ${clientId} of ${appId} disagrees with its key`);
      }
      for (const { key, value } of deps.store.db<StoredCredential>('oidc_credentials').getRange({})) {
        const [appId, clientId, credentialId] = key as [string, string, string];
        if (!clients.doesExist([appId, clientId])) problems.push(`credential ${credentialId} names no client ${clientId} of ${appId}`);
        if (value.oidc_client_configuration_id !== credentialId || value.application !== appId) {
          problems.push(`credential ${credentialId} of client ${clientId} disagrees with its key`);
        }
      }
      return problems;
    },
  },
];
