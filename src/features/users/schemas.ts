import * as v from 'valibot';
import { ADDRESS_SHAPE_RULE, hasAddressShape } from './addresses.js';
import { EXTERNAL_ID } from '../../lib/ids.js';
import { dotSegmentRefused, isDotSegment } from '../../lib/urls.js';
import { validationError } from '../../lib/errors.js';
import { isTimestamp } from '../../lib/timestamps.js';
import { parseQuery } from '../../lib/validate.js';
import type { RequestContext } from '../../http/context.js';
import { pageQueryParser, type SortedPageQuery } from '../../http/page-query.js';
import { PREVIEW_SIZES, type PreviewSize } from './profile-files.js';
import type { ChangeMode } from './profile-change.js';

/** Profile writes take JSON or multipart/form-data (files). */
export const PROFILE_BODY_KINDS = ['json', 'multipart'] as const;

/**
 * The top-level keys a profile is read with besides `data` and `attributes`. A `PUT` takes them and
 * ignores them, so a profile read can be edited and sent back as it is (it replaces, as that client
 * means to); a `PATCH` names what changes, and one of them there is refused as unknown.
 */
export function readOnlyProfileKeys(mode: ChangeMode, userField: string): ReadonlySet<string> {
  return new Set(mode === 'replace' ? [userField, 'state', 'auth_level', 'verified_data', 'groups', 'meta', 'connection_map'] : []);
}

/** Values a `lookup_filter` or `id_filter` may list. */
const FILTER_VALUES_LIMIT = 1000;

const booleanParam = v.pipe(
  v.picklist(['true', 'false'], 'must be true or false'),
  v.transform((text) => text === 'true'),
);

const commaList = (what: string) =>
  v.pipe(
    v.string(),
    v.transform((text) => text.split(',').map((item) => item.trim())),
    v.check((items) => items.every((item) => item.length > 0), `a comma-separated list of ${what} without empty entries`),
    v.maxLength(FILTER_VALUES_LIMIT, `at most ${FILTER_VALUES_LIMIT} ${what}`),
  );

const fieldsParam = commaList('field names');

const ListFilterSchema = v.strictObject({
  fields: v.optional(fieldsParam),
  lookup_filter: v.optional(
    v.pipe(
      commaList('email addresses or phone numbers'),
      v.check((values) => values.every(hasAddressShape), `each value must be ${ADDRESS_SHAPE_RULE}`),
    ),
  ),
  id_filter: v.optional(v.pipe(commaList('user IDs'), v.check((ids) => ids.every((id) => EXTERNAL_ID.test(id)), 'must list user IDs'))),
  include_duplicates: v.optional(booleanParam, 'false'),
});

const parsePage = pageQueryParser({ maxPageSize: 1000, defaultPageSize: 100, cursor: EXTERNAL_ID, listed: 'user', sortable: true });

export type ListQuery = v.InferOutput<typeof ListFilterSchema> & SortedPageQuery;

/** The list query: the shared paging parameters plus the profile filters; anything else is a 400. */
export function parseListQuery(ctx: RequestContext): ListQuery {
  return parsePage(ctx, ListFilterSchema);
}

export const ProfileQuerySchema = v.strictObject({ fields: v.optional(fieldsParam) });

export const UpsertQuerySchema = v.strictObject({ update_integrations: v.optional(booleanParam, 'false') });

/**
 * Refuses an upsert's query unless it names at most `update_integrations` (accepted and ignored). A
 * write without a query, as nearly all are, has nothing to check: parsing `{}` by the schema passes.
 */
export function checkUpsertQuery(ctx: RequestContext): void {
  if (ctx.rawQuery !== '') parseQuery(ctx, UpsertQuerySchema);
}

const previewParam = v.optional(
  v.picklist(Object.keys(PREVIEW_SIZES) as PreviewSize[], `must be one of ${Object.keys(PREVIEW_SIZES).join(', ')}`),
);

export const FieldQuerySchema = v.strictObject({ preview: previewParam });

export const PlatformFieldQuerySchema = v.strictObject({
  preview: previewParam,
  fail_on_error: v.optional(booleanParam, 'false'),
});

export const StateBodySchema = v.strictObject({ state: v.picklist(['enabled', 'disabled'], 'must be enabled or disabled') });

export const MetaBodySchema = v.strictObject({
  last_passkey_registration_prompt: v.pipe(
    v.string('must be an ISO 8601 date-time'),
    v.check(isTimestamp, 'must be an ISO 8601 date-time with a time zone, like 2027-01-31T12:00:00Z'),
    v.transform((text) => new Date(text).toISOString()),
  ),
});

/** The path's user ID for a write: `__uuid__`/`__default__` ask for a generated one. */
export const GENERATE_ID = new Set(['__uuid__', '__default__']);
export const SAMPLE_ID = '__sample__';

const PATH_WORDS = new Set([SAMPLE_ID, ...GENERATE_ID]);

/** Whether a user can have this ID: ADDENDUM §1's characters (generated `user_…` IDs are of them too), and no path word. */
export const isUserId = (id: string) => EXTERNAL_ID.test(id) && !PATH_WORDS.has(id);

/**
 * 400 `E_VALIDATION` on `field` unless a new user may take `id` (an ID `isUserId` already passed): not a
 * dot segment, which a path could not reach. A user stored under one before is read and written as any other.
 */
export function checkNewUserId(id: string, field: string): void {
  if (isDotSegment(id)) throw validationError({ [field]: [dotSegmentRefused('a new user ID is')] });
}
