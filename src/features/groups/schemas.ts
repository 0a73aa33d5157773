import * as v from 'valibot';
import { isAbsoluteHttpUrl, isLocalPath, USERINFO_REFUSED, withoutUserinfo } from '../../lib/urls.js';
import { EMAIL_RULE, hasAddressShape, isEmailAddress, isPhoneNumber, PHONE_RULE } from '../users/addresses.js';
import { validationError, type FieldErrors } from '../../lib/errors.js';
import type { RequestContext } from '../../http/context.js';
import { EXTERNAL_ID, idPattern } from '../../lib/ids.js';
import { jsonRecord, noMisleadingCharacters, oneLineOfText, takingReadOnly, trimmedText } from '../../lib/validate.js';
import type { UserRef } from '../users/directory.js';
import type { MemberState } from '../../../machines/member.machine.js';
import { pageQueryParser, type PageQuery } from '../../http/page-query.js';
import { ROLES_LIMIT } from './keys.js';
import { fitsNameIndex } from './names.js';

const META_LIMIT = 16 * 1024;

const GROUP_NAME_LIMIT = 200;
const NAME_SAYS = { notText: 'name must be a string', empty: 'name is required', tooLong: `name is at most ${GROUP_NAME_LIMIT} characters` };
const Name = v.pipe(
  oneLineOfText(GROUP_NAME_LIMIT, NAME_SAYS),
  v.check(fitsNameIndex, 'name is too long once its letter case and Unicode form are folded for lookups (at most 1 200 bytes of UTF-8)'),
);
/** What every group name has been: a lookup finds one stored before the character rule of Name by its exact name. */
const NameShape = trimmedText(GROUP_NAME_LIMIT, NAME_SAYS);

const Meta = v.pipe(
  jsonRecord(v.record(v.string(), v.unknown()), 'meta must be an object'),
  v.check((meta) => Buffer.byteLength(JSON.stringify(meta)) <= META_LIMIT, `meta must be at most ${META_LIMIT} bytes as JSON`),
);

/** ADDENDUM §5 group body; a PUT replaces, so omitted policy and meta return to their defaults. */
export const GroupBody = v.strictObject({
  name: Name,
  admission_policy: v.optional(v.picklist(['invite_only', 'open'], 'admission_policy is invite_only or open'), 'invite_only'),
  meta: v.optional(Meta, {}),
});

/**
 * SPEC marks no group field required on PUT: an absent name keeps the group's. The Group's read-only
 * fields are taken and ignored, so a group read (the plain one, or the `group` of a `/me` wrapper) can
 * be sent back.
 */
export const GroupUpdateBody = takingReadOnly(
  v.strictObject({ ...GroupBody.entries, name: v.optional(Name) }),
  ['id', 'member_count', 'app_id', 'created_at', 'updated_at', 'created_by', 'updated_by'],
);

const Role = oneLineOfText(64, { notText: 'a role is a string', empty: 'a role is a non-empty string', tooLong: 'a role is at most 64 characters' });

const Roles = v.pipe(
  v.array(Role, 'roles must be an array of strings'),
  v.transform((roles) => [...new Set(roles)]),
  v.maxLength(ROLES_LIMIT, `at most ${ROLES_LIMIT} roles`),
);

const UserId = v.pipe(v.string('user_id must be a string'), v.regex(EXTERNAL_ID, 'user_id is 1 to 128 characters of [A-Za-z0-9_.:@|+-]'));
const Email = v.pipe(v.string('email must be a string'), v.trim(), v.check(isEmailAddress, `email must be ${EMAIL_RULE}`));
const Phone = v.pipe(v.string('phone must be a string'), v.trim(), v.check(isPhoneNumber, `phone must be ${PHONE_RULE}`));

const Target = {
  user_id: v.optional(UserId),
  email: v.optional(Email),
  phone: v.optional(Phone),
};

const MEMBER_STATES = ['active', 'invite_pending', 'invite_rejected'] as const satisfies readonly MemberState[];

export const MemberCreateBody = v.strictObject({
  ...Target,
  roles: Roles,
  state: v.optional(v.picklist(MEMBER_STATES, `state is one of ${MEMBER_STATES.join(', ')}`), 'active'),
});

/** Member PUT: `{roles}`, and the Group member's read-only fields taken and ignored, so a member read can be sent back. */
export const MemberUpdateBody = takingReadOnly(v.strictObject({ roles: Roles }), [
  'id',
  'user_id',
  'group_id',
  'state',
  'invited_by',
  'added_by',
  'created_at',
  'updated_at',
  'profile',
]);

const RedirectUrl = v.pipe(
  v.string('redirect_url must be a string'),
  v.maxLength(2048, 'redirect_url is at most 2048 characters'),
  noMisleadingCharacters('redirect_url'),
  v.check((url) => isLocalPath(url) || isAbsoluteHttpUrl(url), 'redirect_url is an absolute http(s) URL or a path starting with one / with no . or .. segment'),
  v.check(withoutUserinfo, `redirect_url ${USERINFO_REFUSED}`),
);

/** Invite create and update share one shape: `roles` required, a user (optional on update), optional redirect and variant. */
export const InviteBody = v.strictObject({
  ...Target,
  roles: Roles,
  redirect_url: v.optional(RedirectUrl),
  // An OIDC credential's `app_variant_id` names the same thing, by the same rule.
  app_variant_id: v.optional(v.pipe(v.string('app_variant_id must be a string'), v.regex(EXTERNAL_ID, 'app_variant_id is 1 to 128 characters of [A-Za-z0-9_.:@|+-]'))),
});

/** Invite PUT: the create body, and the Group invite's read-only fields taken and ignored, so an invite read can be sent back. */
export const InviteUpdateBody = takingReadOnly(InviteBody, [
  'id',
  'group_id',
  'state',
  'user_lookup_value',
  'created_at',
  'created_by',
  'accepted_by',
  'ensured_user_id',
]);

/** The fields a member or invite body may name its user by. */
export type UserFields = { user_id?: string; email?: string; phone?: string };

/**
 * The user a member or invite body names: exactly one of `user_id`, `email`, `phone`
 * (400 `E_VALIDATION` with `field_errors` on each field otherwise).
 */
export function userRefOf(body: UserFields): UserRef {
  const given = (['user_id', 'email', 'phone'] as const).filter((field) => body[field] !== undefined);
  if (given.length === 1) {
    const field = given[0];
    return field === 'user_id' ? { user_id: body.user_id! } : field === 'email' ? { email: body.email! } : { phone: body.phone! };
  }
  const errors: FieldErrors = {};
  if (given.length === 0) errors.user_id = ['one of user_id, email or phone is required'];
  for (const field of given) errors[field] = ['user_id, email and phone are mutually exclusive'];
  throw validationError(errors);
}

/** `userRefOf` where naming no user is allowed: SPEC's invite PUT does not require one. */
export function optionalUserRefOf(body: UserFields): UserRef | undefined {
  const named = body.user_id !== undefined || body.email !== undefined || body.phone !== undefined;
  return named ? userRefOf(body) : undefined;
}

/** What a list pages: its `after` is an ID of that kind, so a cursor taken from another list is refused, not read as a position. */
export type ListedKind = 'group' | 'member' | 'invite';

/** What a `lookup_filter` value can match on each list: a value no item could is malformed, not an empty page. */
const LOOKUP_VALUES = {
  // A group ID is a name by this rule too.
  group: { matches: (value: string) => v.is(NameShape, value), says: `a group ID or name: at most ${GROUP_NAME_LIMIT} characters` },
  member: { matches: (value: string) => v.is(UserId, value) || hasAddressShape(value), says: 'a user ID, an email address or a phone number' },
};

/**
 * A `lookup_filter`: its comma list, trimmed, without repeats, each value one that `listed` items could
 * match. On group lists its whole text is one value more when that has a comma and could be a name,
 * so a name with a comma (or two in a row) can be asked for; elsewhere an empty entry is malformed.
 */
const lookupFilter = (listed: keyof typeof LOOKUP_VALUES) => {
  const { matches, says } = LOOKUP_VALUES[listed];
  return v.optional(
    v.pipe(
      v.string(),
      v.transform((list) => {
        const whole = list.trim();
        const entries = list.split(',').map((s) => s.trim());
        const tried = listed === 'group' && whole.includes(',') && whole.length <= GROUP_NAME_LIMIT ? [whole] : [];
        return { entries, tried, values: [...new Set(entries.filter(Boolean))] };
      }),
      v.check(({ values }) => values.length >= 1, 'lookup_filter lists at least one value'),
      v.check(({ entries, tried }) => tried.length > 0 || entries.every(Boolean), 'lookup_filter is a comma-separated list without empty entries'),
      v.check(({ values }) => values.length <= 100, 'lookup_filter holds at most 100 values'),
      v.check(({ values }) => values.every(matches), `each lookup_filter value is ${says}`),
      v.transform(({ values, tried }) => [...values, ...tried]),
    ),
  );
};

const FilterFields = {
  lookup_filter: lookupFilter('member'),
  ensured_user_id: v.optional(UserId),
};

export type ListQuery = v.InferOutput<v.ObjectSchema<typeof FilterFields, undefined>> & PageQuery;

/**
 * The parser of a list's query: `page_size` 1..100 (default 20), `after` (an ID of the `listed`
 * kind), no `sort` (creation order), and the filters that list takes; any other parameter, or one
 * given twice, is a 400. `lookupByName`: the list's `lookup_filter` matches group names.
 */
export function listQueryParser(
  listed: ListedKind,
  filters: ReadonlyArray<keyof typeof FilterFields>,
  { lookupByName = false } = {},
): (ctx: RequestContext) => ListQuery {
  const fields = { ...FilterFields, lookup_filter: lookupFilter(lookupByName ? 'group' : 'member') };
  const schema = v.strictObject(Object.fromEntries(filters.map((name) => [name, fields[name]])));
  const parsePage = pageQueryParser({ maxPageSize: 100, defaultPageSize: 20, cursor: idPattern(listed), listed, sortable: false });
  return (ctx) => parsePage(ctx, schema) as ListQuery;
}
