import * as v from 'valibot';

export const FIELD_TYPES = ['string', 'number', 'boolean', 'object', 'image', 'file'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

const FieldSchema = v.strictObject({
  type: v.picklist(FIELD_TYPES, `type must be one of ${FIELD_TYPES.join(', ')}`),
  user_readable: v.optional(v.boolean()),
  user_writable: v.optional(v.boolean()),
  required: v.optional(v.boolean()),
});

const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** ADDENDUM §2: what an application's profile `data` may hold. */
export const AppSchemaSchema = v.strictObject({
  fields: v.optional(
    v.pipe(
      v.record(v.pipe(v.string(), v.regex(FIELD_NAME, 'field names are letters, digits and _')), FieldSchema),
      v.check((fields) => Object.keys(fields).length <= 200, 'at most 200 fields'),
    ),
    {},
  ),
  allow_unknown_fields: v.optional(v.boolean(), true),
});

export type AppSchema = v.InferOutput<typeof AppSchemaSchema>;
export type FieldSpec = v.InferOutput<typeof FieldSchema>;

export const AppNameSchema = v.pipe(v.string(), v.trim(), v.minLength(1, 'name is required'), v.maxLength(200));

export const CreateAppSchema = v.strictObject({
  name: AppNameSchema,
  schema: v.optional(AppSchemaSchema),
});

export const UpdateAppSchema = v.strictObject({
  name: v.optional(AppNameSchema),
  schema: v.optional(AppSchemaSchema),
});

/** Fields every schema has whether it names them or not (ADDENDUM §2). */
export const IMPLICIT_FIELDS: Readonly<Record<string, FieldSpec>> = Object.freeze({
  user_id: { type: 'string', user_readable: true, user_writable: false },
  email: { type: 'string', user_readable: true, user_writable: true },
  phone_number: { type: 'string', user_readable: true, user_writable: true },
  first_name: { type: 'string', user_readable: true, user_writable: true },
  last_name: { type: 'string', user_readable: true, user_writable: true },
});

export const emptySchema = (): AppSchema => ({ fields: {}, allow_unknown_fields: true });
