import { createHmac, timingSafeEqual } from 'node:crypto';

/** Keyed hash under the server pepper: what is stored in place of every secret. */
export const hmacSecret = (pepper: Buffer, secret: string) => createHmac('sha256', pepper).update(secret).digest();

export function secretMatches(pepper: Buffer, secret: string, storedHash: Uint8Array): boolean {
  const candidate = hmacSecret(pepper, secret);
  return candidate.length === storedHash.length && timingSafeEqual(candidate, storedHash);
}

/** `sec_ab…wxyz`: enough to recognise a secret, never enough to use it. */
export const maskSecret = (secret: string) => `${secret.slice(0, 6)}…${secret.slice(-4)}`;
