import { createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { Invariant } from '../verify/invariants.js';
import { SIGNING_ALG, type StoredKey } from './signing-keys.js';

/** The public key `read` makes from a stored JWK, as a JWK; undefined when that JWK does not parse. */
function publicJwkOf(read: () => KeyObject): JsonWebKey | undefined {
  try {
    return read().export({ format: 'jwk' });
  } catch {
    return undefined;
  }
}

/** What is wrong with a stored key, told without any of its material; undefined when nothing is. */
function flawOf(kid: string, stored: StoredKey): string | undefined {
  if (stored.kid !== kid) return 'is stored under another kid';
  if (!Number.isFinite(stored.createdAt)) return 'has no creation time (the newest key is the one that signs)';
  const { privateJwk, publicJwk } = stored;
  if ([privateJwk, publicJwk].some((jwk) => jwk.kid !== kid || jwk.alg !== SIGNING_ALG || jwk.use !== 'sig')) {
    return `does not name its kid, alg ${SIGNING_ALG} and use sig in both halves`;
  }
  // The public half is published as it is stored (JWKS).
  if (publicJwk.d !== undefined) return 'holds private material in its public half';
  // Derived from the private scalar alone: the `x` a private JWK also carries is not what signs.
  const signing = publicJwkOf(() => createPublicKey(createPrivateKey({ key: privateJwk as JsonWebKey, format: 'jwk' })));
  if (!signing) return 'has a private half that does not parse';
  const verifying = publicJwkOf(() => createPublicKey({ key: publicJwk as JsonWebKey, format: 'jwk' }));
  if (!verifying) return 'has a public half that does not parse';
  if (signing.crv !== verifying.crv || signing.x !== verifying.x) return 'has a public half that does not match its private half';
  return undefined;
}

/** The signing keys: at least one (the newest signs), each one a working pair under its own kid. */
export const signingKeyInvariants: Invariant[] = [
  {
    name: 'signing keys',
    check(deps) {
      const problems: string[] = [];
      const keys = [...deps.store.db<StoredKey>('signing_keys').getRange({})];
      if (keys.length === 0) problems.push('there is no signing key');
      for (const { key, value } of keys) {
        const flaw = flawOf(String(key), value);
        if (flaw) problems.push(`key ${String(key)} ${flaw}`);
      }
      return problems;
    },
  },
];
