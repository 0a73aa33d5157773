import * as v from 'valibot';
import { addFieldError, validationError, type FieldErrors } from './errors.js';
import type { RequestContext } from '../http/context.js';

/** `config.redirect_uris[1]`: where an issue lies, written the way a caller writes it; `body` for the whole input. */
function issuePath(issue: v.BaseIssue<unknown>): string {
  let path = '';
  for (const { key } of issue.path ?? []) {
    if (typeof key === 'number') path += `[${key}]`;
    else path += path === '' ? String(key) : `.${String(key)}`;
  }
  return path === '' ? 'body' : path;
}

/** valibot issues as ADDENDUM §7 `field_errors`, keyed by the path of the offending value. */
export function fieldErrorsOf(issues: readonly v.BaseIssue<unknown>[]): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of issues) addFieldError(errors, issuePath(issue), issue.message);
  return errors;
}

/** `input` checked against `schema`, or 400 `E_VALIDATION` with `field_errors`. */
export function parseInput<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (!result.success) throw validationError(fieldErrorsOf(result.issues));
  return result.output;
}

/**
 * The request's JSON body (or the fields of a form body, which only a route accepting forms is
 * handed) checked against `schema`; a missing body counts as `{}`.
 */
export function parseJsonBody<S extends v.GenericSchema>(ctx: RequestContext, schema: S): v.InferOutput<S> {
  const { body } = ctx;
  return parseInput(schema, body.kind === 'json' ? body.value : body.kind === 'form' ? body.fields : {});
}
