import { counterMatchesRecount, type Invariant } from '../../verify/invariants.js';
import { clientCount } from './service.js';

export const oidcClientInvariants: Invariant[] = [
  {
    name: 'oidc client count',
    check: (deps) => counterMatchesRecount(deps, 'oidc clients', deps.store.db('oidc_clients'), clientCount),
  },
];
