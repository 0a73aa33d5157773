import * as v from 'valibot';

/** `POST /hub/auth/token`; `grant_type` is accepted for OAuth clients that always send it. */
export const RefreshSchema = v.strictObject({
  refresh_token: v.pipe(v.string('must be a string'), v.minLength(1, 'is required'), v.maxLength(512, 'must be at most 512 characters')),
  grant_type: v.optional(v.literal('refresh_token', 'must be refresh_token')),
  // OAuth public clients name themselves; a refresh token belongs to a session, not to a client.
  client_id: v.optional(v.pipe(v.string('must be a string'), v.maxLength(256, 'must be at most 256 characters'))),
});

/** Both sign-out routes; the body is optional. */
export const SignOutSchema = v.strictObject({
  sign_out_all: v.optional(v.boolean('must be true or false'), false),
});
