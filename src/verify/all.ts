import type { Invariant } from './invariants.js';
import { userInvariants } from '../features/users/invariants.js';
import { oidcClientInvariants } from '../features/oidc-clients/invariants.js';
import { groupInvariants } from '../features/groups/invariants.js';
import { sessionInvariants } from '../features/sessions/invariants.js';
import { magicLinkInvariants } from '../features/magic-links/invariants.js';
import { applicationInvariants } from '../features/applications/invariants.js';
import { signingKeyInvariants } from '../auth/signing-key-invariants.js';

/** Every invariant of the stored data, feature by feature: what `svc verify` and the crash tests check. */
export const allInvariants: readonly Invariant[] = [
  ...applicationInvariants,
  ...userInvariants,
  ...oidcClientInvariants,
  ...groupInvariants,
  ...sessionInvariants,
  ...magicLinkInvariants,
  ...signingKeyInvariants,
];
