import * as v from 'valibot';
import { isAbsoluteHttpUrl, USERINFO_REFUSED, withoutUserinfo } from '../../lib/urls.js';
import { jsonRecord, NO_MISLEADING_CHARACTERS } from '../../lib/validate.js';
import { isUserId } from '../users/schemas.js';

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
export const MAX_LINK_TTL_MS = 30 * UNIT_MS.d;

/** `30m`, `1h`, `2d` → milliseconds, at most 30 days. */
const Expiration = v.pipe(
  v.string(),
  v.regex(/^[1-9][0-9]{0,6}[mhd]$/, 'must be a positive whole number followed by m, h or d (30m, 1h, 2d)'),
  v.transform((text) => Number(text.slice(0, -1)) * UNIT_MS[text.slice(-1) as keyof typeof UNIT_MS]),
  v.maxValue(MAX_LINK_TTL_MS, 'must be at most 30d'),
);

const RedirectUrl = v.pipe(
  v.string(),
  v.maxLength(2048, 'must be at most 2048 characters'),
  NO_MISLEADING_CHARACTERS,
  v.check(isAbsoluteHttpUrl, 'must be an absolute http(s) URL'),
  v.check(withoutUserinfo, USERINFO_REFUSED),
);

const VerificationType = v.picklist(['email', 'phone'], 'must be email or phone');

/** Checked against the app schema by the route (as a platform profile write); `user_id` is top-level. */
const ProfileData = v.pipe(
  jsonRecord(v.record(v.string(), v.unknown())),
  v.check((data) => !('user_id' in data), 'user_id is given at the top level, not in data'),
);

/** `POST /hub/auth/magic`. */
export const PlatformMagicSchema = v.strictObject({
  verification_type: v.optional(VerificationType),
  verification_mode: v.optional(VerificationType),
  data: ProfileData,
  user_id: v.optional(
    v.pipe(
      v.string(),
      v.check(isUserId, 'must be 1 to 128 characters of A-Z a-z 0-9 _ . : @ | + -, and not the path words __sample__, __uuid__ or __default__'),
    ),
  ),
  redirect_url: v.optional(RedirectUrl),
  expiration: v.optional(Expiration, '1h'),
  group_to_join: v.optional(v.pipe(v.string(), v.regex(/^group_[0-9A-HJKMNP-TV-Z]{26}$/, 'must be a group ID'))),
});

/** `POST /me/auth/magic`: the body is optional. */
export const MeMagicSchema = v.strictObject({
  redirect_url: v.optional(RedirectUrl),
  expiration: v.optional(Expiration, '1h'),
});
