import { createHmac, timingSafeEqual } from 'node:crypto';

/** Keyed hash under the server pepper: what is stored in place of every secret. */
export const hmacSecret = (pepper: Buffer, secret: string) => createHmac('sha256', pepper).update(secret).digest();

/** A bearer token's keyed hash as text: the key it is stored and looked up under (refresh tokens, magic links). */
export const tokenKey = (pepper: Buffer, token: string) => hmacSecret(pepper, token).toString('base64url');

export function secretMatches(pepper: Buffer, secret: string, storedHash: Uint8Array): boolean {
  const candidate = hmacSecret(pepper, secret);
  return candidate.length === storedHash.length && timingSafeEqual(candidate, storedHash);
}

/**
 * Whether two secrets are equal, in time that does not depend on where they differ (ADDENDUM §1): for
 * a secret compared with one already verified against its HMAC, without paying for the HMAC again.
 */
export function sameSecret(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/** `sec_ab…wxyz`: enough to recognise a secret, never enough to use it. */
export const maskSecret = (secret: string) => `${secret.slice(0, 6)}…${secret.slice(-4)}`;
