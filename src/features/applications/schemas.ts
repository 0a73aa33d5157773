import * as v from 'valibot';
import { jsonObject, jsonRecord, oneLineOfText } from '../../lib/validate.js';

export const FIELD_TYPES = ['string', 'number', 'boolean', 'object', 'image', 'file'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

const FieldSchema = jsonObject(
  v.strictObject({
    type: v.picklist(FIELD_TYPES, `type must be one of ${FIELD_TYPES.join(', ')}`),
    user_readable: v.optional(v.boolean()),
    user_writable: v.optional(v.boolean()),
    required: v.optional(v.boolean()),
  }),
);

const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** The implicit fields an app may list to set their rights: they stay strings, and `user_id` stays as it is. */
const RETYPABLE_IMPLICIT = new Set(['email', 'phone_number', 'first_name', 'last_name']);

/** ADDENDUM §2: what an application's profile `data` may hold. */
export const AppSchemaSchema = jsonObject(
  v.strictObject({
    fields: v.optional(
      v.pipe(
        jsonRecord(v.record(v.pipe(v.string(), v.regex(FIELD_NAME, 'field names are letters, digits and _')), FieldSchema)),
        v.check((fields) => Object.keys(fields).length <= 200, 'at most 200 fields'),
        v.check((fields) => !Object.hasOwn(fields, 'user_id'), 'user_id is implicit: read-only, never listed'),
        v.check(
          (fields) => Object.entries(fields).every(([name, spec]) => !RETYPABLE_IMPLICIT.has(name) || spec.type === 'string'),
          'email, phone_number, first_name and last_name are implicit strings: listed only to set their rights',
        ),
      ),
      {},
    ),
    allow_unknown_fields: v.optional(v.boolean(), true),
  }),
);

export type AppSchema = v.InferOutput<typeof AppSchemaSchema>;
export type FieldSpec = v.InferOutput<typeof FieldSchema>;

export const AppNameSchema = oneLineOfText(200, { empty: 'name is required', tooLong: 'name is at most 200 characters' });

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

/** The schema field rules for one field name, implicit fields included; undefined for unknown fields. */
export function fieldSpec(schema: AppSchema, name: string): FieldSpec | undefined {
  // Own properties only: a field named `constructor` must not find Object.prototype's.
  if (Object.hasOwn(schema.fields, name)) return schema.fields[name];
  return Object.hasOwn(IMPLICIT_FIELDS, name) ? IMPLICIT_FIELDS[name] : undefined;
}

export const emptySchema = (): AppSchema => ({ fields: {}, allow_unknown_fields: true });
