import { SignJWT, jwtVerify, errors as joseErrors, type JWTHeaderParameters, type JWTPayload } from 'jose';
import { ulid } from 'ulid';
import { randomBytes, randomUUID } from 'node:crypto';
import { tokenRefused } from '../lib/errors.js';
import type { Clock } from '../lib/clock.js';
import type { Config } from '../config.js';
import type { SigningKey, SigningKeys } from './signing-keys.js';
import { sessionStart } from './revocation.js';
import type { AuthLevel } from '../../machines/user.machine.js';

export interface AccessClaims {
  sub: string;
  aud: string[];
  iat: number;
  exp: number;
  jti: string;
  sid: string;
  /** When the session started (ms), decoded from `sid` once per token. */
  sessionStart: number;
  /**
   * The creation instant (ms) of the user the token was issued for (`USER_CREATED_CLAIM`): which of the
   * users ever made under its ID it belongs to. Undefined in a token issued before the claim.
   */
  userCreatedAt: number | undefined;
  appId: string;
}

export interface IssueRequest {
  appId: string;
  userId: string;
  sessionId: string;
  authLevel: AuthLevel;
  isVerifiedUser: boolean;
  /** The user's creation instant (ms), as `userCreatedAt` reads it from the user. */
  userCreatedAt: number;
}

/** The private claim that carries `AccessClaims.userCreatedAt`. */
export const USER_CREATED_CLAIM = 'uct';

/** A session ID carries its start time (a ULID of that instant), which sign-out-everywhere compares with. */
export const newSessionId = (at: number) => `sess_${ulid(at)}`;

/** Where a session ID's start ends: `sess_` and the ULID's 10 characters of time. */
const SESSION_TIME_END = 'sess_'.length + 10;
const BASE32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** The largest ULID random part: 16 base-32 characters, 80 bits. */
const RANDOM_MAX = (1n << 80n) - 1n;

/**
 * A session ID of the same start as `sid` that sorts after it: its ULID's random part drawn anew
 * between `sid`'s and the largest, so that it repeats no ID of an ended session of that millisecond
 * (whose revocation is kept by ID). Undefined when `sid`'s random part is the largest.
 */
export function sessionIdAfter(sid: string): string | undefined {
  let below = 0n;
  for (const char of sid.slice(SESSION_TIME_END)) below = below * 32n + BigInt(BASE32.indexOf(char));
  const span = RANDOM_MAX - below;
  if (span <= 0n) return undefined;
  let random = below + 1n + (BigInt(`0x${randomBytes(10).toString('hex')}`) % span);
  let text = '';
  for (let i = 0; i < 16; i++, random >>= 5n) text = BASE32[Number(random & 31n)] + text;
  return sid.slice(0, SESSION_TIME_END) + text;
}

const MAX_CACHED = 100_000;
/** How often a server reads the key list for a rotation by another process (`keys rotate --revoke`). */
export const KEY_WATCH_MS = 1000;

/**
 * Issues and verifies the service's access tokens (EdDSA JWTs). A verified token is cached until
 * its `exp`, so its signature is checked once; what may change (user state, revocations) is checked
 * by the bearer step on every request.
 */
export class AccessTokens {
  /** Verified tokens by `cacheKeyOf`; the whole token is compared on a hit. */
  private readonly verified = new Map<string, { token: string; claims: AccessClaims; kid: string }>();
  private keyWatch?: NodeJS.Timeout;

  constructor(
    private readonly config: Config,
    private readonly keys: SigningKeys,
    private readonly clock: Clock,
  ) {
    // Whatever request reads the key list first (a JWKS read, a token issued), not only the watch.
    keys.onReload(() => this.forgetDroppedKeys());
  }

  /**
   * Reads the key list every `KEY_WATCH_MS`: a token verified before is not verified again, so a key
   * another process revoked (`keys rotate --revoke`) must be seen without a request asking for it.
   */
  watchKeys(onError: (error: unknown) => void): void {
    this.keyWatch = setInterval(() => this.keys.refresh().catch(onError), KEY_WATCH_MS);
    this.keyWatch.unref();
  }

  stop(): void {
    clearInterval(this.keyWatch);
  }

  /** Forgets the verified tokens of every key no longer in the list. */
  private forgetDroppedKeys(): void {
    for (const [key, { kid }] of this.verified) if (!this.keys.find(kid)) this.verified.delete(key);
  }

  async issue(request: IssueRequest): Promise<{ token: string; claims: AccessClaims }> {
    await this.keys.refresh();
    const key = this.keys.current();
    const iat = Math.floor(this.clock.now() / 1000);
    const exp = iat + this.config.accessTokenTtlSeconds;
    const prefix = this.config.names.claimPrefix;
    const jti = randomUUID();
    const aud = [`app:${request.appId}`];
    const token = await new SignJWT({
      sid: request.sessionId,
      [USER_CREATED_CLAIM]: request.userCreatedAt,
      [`${prefix}app_user_id`]: request.userId,
      [`${prefix}auth_level`]: request.authLevel,
      [`${prefix}is_verified_user`]: request.isVerifiedUser,
    })
      .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: 'JWT' })
      .setIssuer(this.config.publicUrl)
      .setSubject(request.userId)
      .setAudience(aud)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .setJti(jti)
      .sign(key.privateKey);
    return {
      token,
      claims: { sub: request.userId, aud, iat, exp, jti, sid: request.sessionId, sessionStart: sessionStart(request.sessionId), userCreatedAt: request.userCreatedAt, appId: request.appId },
    };
  }

  /** Claims of a token whose signature, issuer and audience shape are valid. Expiry is the caller's check. */
  verify(token: string): AccessClaims | Promise<AccessClaims> {
    return this.verifiedBefore(token) ?? this.verifySignature(token);
  }

  /** Claims of a token this process has verified and still remembers; undefined for any other. */
  verifiedBefore(token: string): AccessClaims | undefined {
    const cached = this.verified.get(cacheKeyOf(token));
    return cached?.token === token ? cached.claims : undefined;
  }

  private async verifySignature(token: string): Promise<AccessClaims> {
    let payload: JWTPayload;
    let signer: SigningKey | undefined;
    const now = this.clock.now();
    const keyOf = async (header: JWTHeaderParameters) => {
      signer = await this.keyFor(header.kid);
      return signer.publicKey;
    };
    if (!isCanonical(token)) throw tokenRefused('The access token is not valid');
    try {
      ({ payload } = await jwtVerify(token, keyOf, {
        issuer: this.config.publicUrl,
        algorithms: ['EdDSA'],
        currentDate: new Date(now),
      }));
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw tokenRefused('The access token has expired', 'E_TOKEN_EXPIRED');
      throw tokenRefused('The access token is not valid');
    }
    const claims = toClaims(payload);
    // Checked once, here: a cached token's own `exp` then ends it before its key is dropped.
    if (claims.exp * 1000 > this.keys.latestExpiry(signer!.kid, now)) {
      throw tokenRefused('The access token outlives what its signing key may sign');
    }
    if (this.verified.size >= MAX_CACHED) this.verified.clear();
    this.verified.set(cacheKeyOf(token), { token, claims, kid: signer!.kid });
    return claims;
  }

  private async keyFor(kid: string | undefined): Promise<SigningKey> {
    if (kid === undefined) throw tokenRefused('The access token names no signing key');
    // Also when the kid is known: a rotation by another process (the CLI) may have retired or dropped it.
    await this.keys.refresh();
    const key = this.keys.find(kid);
    if (!key) throw tokenRefused('The access token was signed by an unknown key');
    return key;
  }
}

/**
 * Whether each segment of a compact JWS is the base64url of its bytes as an encoder writes it: a
 * decoder reads the unused low bits of a segment's last character as it finds them, so one token would
 * otherwise pass in several spellings, each a token of its own to the caches.
 */
const isCanonical = (token: string) => token.split('.').every((segment) => Buffer.from(segment, 'base64url').toString('base64url') === segment);

/**
 * A verified token's cache key: the last 12 characters of its signature (72 bits no one can aim at
 * without the signing key; two tokens sharing them would only take turns in the cache). V8 copies so
 * short a slice, where it points a longer one into the token: the lookup hashes and compares 12
 * flat characters (the whole signature sliced out cost ~0.3 µs more: docs/PERFORMANCE.md, round 19).
 */
const cacheKeyOf = (token: string) => token.slice(-12);

function toClaims(payload: JWTPayload): AccessClaims {
  const aud = Array.isArray(payload.aud) ? payload.aud : payload.aud ? [payload.aud] : [];
  const first = aud[0];
  const userCreatedAt = payload[USER_CREATED_CLAIM];
  if (
    typeof payload.sub !== 'string' ||
    typeof payload.sid !== 'string' ||
    typeof payload.jti !== 'string' ||
    typeof payload.iat !== 'number' ||
    typeof payload.exp !== 'number' ||
    typeof first !== 'string' ||
    !first.startsWith('app:') ||
    (userCreatedAt !== undefined && typeof userCreatedAt !== 'number')
  ) {
    throw tokenRefused('The access token lacks required claims');
  }
  return {
    sub: payload.sub,
    aud,
    iat: payload.iat,
    exp: payload.exp,
    jti: payload.jti,
    sid: payload.sid,
    sessionStart: sessionStart(payload.sid),
    userCreatedAt,
    appId: first.slice('app:'.length),
  };
}
