import * as v from 'valibot';
import { validationError } from '../../lib/errors.js';
import { EXTERNAL_ID } from '../../lib/ids.js';
import { parseInput } from '../../lib/validate.js';
import type { RequestContext } from '../../http/context.js';
import { PREVIEW_SIZES, type PreviewSize } from './profile-files.js';

/** Profile writes take JSON or multipart/form-data (files). */
export const PROFILE_BODY_KINDS = ['json', 'multipart'] as const;

export const LIST_PAGE_SIZE = { min: 1, max: 1000, default: 100 } as const;
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

const userIdParam = v.pipe(v.string(), v.regex(EXTERNAL_ID, 'must be a user ID'));

const fieldsParam = commaList('field names');

export const ListQuerySchema = v.strictObject({
  fields: v.optional(fieldsParam),
  lookup_filter: v.optional(commaList('email addresses or phone numbers')),
  id_filter: v.optional(v.pipe(commaList('user IDs'), v.check((ids) => ids.every((id) => EXTERNAL_ID.test(id)), 'must list user IDs'))),
  page_size: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,9}$/, 'must be a whole number'),
      v.transform(Number),
      v.minValue(LIST_PAGE_SIZE.min, `must be at least ${LIST_PAGE_SIZE.min}`),
      v.maxValue(LIST_PAGE_SIZE.max, `must be at most ${LIST_PAGE_SIZE.max}`),
    ),
    String(LIST_PAGE_SIZE.default),
  ),
  after: v.optional(userIdParam),
  sort: v.optional(v.picklist(['asc', 'desc'], 'must be asc or desc'), 'asc'),
  include_duplicates: v.optional(booleanParam, 'false'),
});
export type ListQuery = v.InferOutput<typeof ListQuerySchema>;

export const ProfileQuerySchema = v.strictObject({ fields: v.optional(fieldsParam) });

export const UpsertQuerySchema = v.strictObject({ update_integrations: v.optional(booleanParam, 'false') });

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
    v.isoTimestamp('must be an ISO 8601 date-time'),
    v.transform((text) => new Date(text).toISOString()),
  ),
});

/** The query string as one value per name (a repeated name is a 400), checked against `schema`. */
export function parseQuery<S extends v.GenericSchema>(ctx: RequestContext, schema: S): v.InferOutput<S> {
  const values: Record<string, string> = {};
  for (const [name, value] of ctx.query()) {
    if (name in values) throw validationError({ [name]: ['given more than once'] });
    values[name] = value;
  }
  return parseInput(schema, values);
}

/** The path's user ID for a write: `__uuid__`/`__default__` ask for a generated one. */
export const GENERATE_ID = new Set(['__uuid__', '__default__']);
export const SAMPLE_ID = '__sample__';
