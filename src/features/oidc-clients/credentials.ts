import { isoDate } from '../../lib/clock.js';
import { newId, randomBase32, randomToken } from '../../lib/ids.js';
import { hmacSecret, maskSecret } from '../../lib/secrets.js';

/** A credential as stored: the secret only as an HMAC under the pepper, plus its mask for display. */
export interface StoredCredential {
  oidc_client_configuration_id: string;
  client_id: string;
  name: string;
  secret_hash: Uint8Array;
  secret_masked: string;
  expires: string;
  application: string;
  app_variant_id: string;
  created_at: string;
  updated_at: string;
}

/** A credential as answered; `secret` is masked except in the answer that created it. */
export interface Credential {
  name: string;
  client_id: string;
  secret: string;
  expires: string;
  expired: boolean;
  application: string;
  app_variant_id: string;
  oidc_client_configuration_id: string;
  created_at: string;
  updated_at: string;
}

export interface CredentialOptions {
  name?: string;
  app_variant_id?: string;
  /** Epoch ms; one year after `now` when absent. */
  expiresAt?: number;
}

export const DEFAULT_CREDENTIAL_NAME = 'default';
export const DEFAULT_APP_VARIANT = 'default';

/** The furthest a credential's `expires` may lie: a secret that never expires is never rotated. */
export const MAX_CREDENTIAL_YEARS = 5;

/** The same instant `years` later in the calendar (UTC). */
export function yearsAfter(now: number, years: number): number {
  const date = new Date(now);
  date.setUTCFullYear(date.getUTCFullYear() + years);
  return date.getTime();
}

/** A new credential and its clear secret, which exists only in the answer that creates it. */
export function mintCredential(
  pepper: Buffer,
  appId: string,
  options: CredentialOptions,
  now: number,
): { stored: StoredCredential; secret: string } {
  const secret = `sec_${randomToken(32)}`;
  const at = isoDate(now);
  const stored: StoredCredential = {
    oidc_client_configuration_id: newId('oidcc'),
    client_id: `oc_${randomBase32(24)}`,
    name: options.name ?? DEFAULT_CREDENTIAL_NAME,
    secret_hash: hmacSecret(pepper, secret),
    secret_masked: maskSecret(secret),
    expires: isoDate(options.expiresAt ?? yearsAfter(now, 1)),
    application: appId,
    app_variant_id: options.app_variant_id ?? DEFAULT_APP_VARIANT,
    created_at: at,
    updated_at: at,
  };
  return { stored, secret };
}

export function showCredential(stored: StoredCredential, now: number, clearSecret?: string): Credential {
  return {
    name: stored.name,
    client_id: stored.client_id,
    secret: clearSecret ?? stored.secret_masked,
    expires: stored.expires,
    expired: Date.parse(stored.expires) <= now,
    application: stored.application,
    app_variant_id: stored.app_variant_id,
    oidc_client_configuration_id: stored.oidc_client_configuration_id,
    created_at: stored.created_at,
    updated_at: stored.updated_at,
  };
}
