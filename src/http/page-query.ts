import * as v from 'valibot';
import { parseInput } from '../lib/validate.js';
import type { SortOrder } from '../storage/paging.js';

export interface PageQuery {
  pageSize: number;
  /** Exclusive cursor: the ID of the last resource of the previous page. */
  after?: string;
  sort: SortOrder;
}

export interface PageQueryRules {
  maxPageSize: number;
  defaultPageSize: number;
  /** The shape of the listed resource's IDs: any other `after` is malformed. */
  cursor: RegExp;
}

const ONCE = 'must be given once';

/**
 * `page_size` as a query string gives it: the digits of a number from 1 to `max`, written as JSON
 * writes it (no leading zeros), as every other number the API reads is.
 */
export function pageSizeParam(max: number) {
  const range = `must be a whole number from 1 to ${max}`;
  return v.pipe(
    v.string(ONCE),
    v.regex(/^[0-9]+$/, range),
    v.regex(/^(?:0|[1-9][0-9]*)$/, `${range}, without leading zeros`),
    v.transform(Number),
    v.minValue(1, range),
    v.maxValue(max, range),
  );
}

/** The paging parameters `pageQueryParser` reads. */
export const PAGE_PARAMS: ReadonlySet<string> = new Set(['page_size', 'after', 'sort']);

/**
 * Builds the parser of `page_size`, `after` and `sort`: out-of-range or malformed values answer 400
 * `E_VALIDATION` naming the parameter, never a silently clamped page.
 */
export function pageQueryParser(rules: PageQueryRules): (query: URLSearchParams) => PageQuery {
  const { maxPageSize, defaultPageSize, cursor } = rules;
  const schema = v.object({
    page_size: v.optional(pageSizeParam(maxPageSize), String(defaultPageSize)),
    after: v.optional(v.pipe(v.string(ONCE), v.regex(cursor, 'must be the ID of a listed resource'))),
    sort: v.optional(v.picklist(['asc', 'desc'], 'must be asc or desc'), 'asc'),
  });
  return (query) => {
    const given: Record<string, string | string[]> = {};
    for (const name of PAGE_PARAMS) {
      const values = query.getAll(name);
      if (values.length > 0) given[name] = values.length === 1 ? values[0] : values;
    }
    const parsed = parseInput(schema, given);
    return { pageSize: parsed.page_size, after: parsed.after, sort: parsed.sort };
  };
}
