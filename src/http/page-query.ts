import * as v from 'valibot';
import { parseInput, parseQuery } from '../lib/validate.js';
import type { SortOrder } from '../storage/paging.js';
import type { RequestContext } from './context.js';

/** The paging of a list in creation order only. */
export interface PageQuery {
  pageSize: number;
  /** Exclusive cursor: the ID of the last resource of the previous page. */
  after?: string;
}

/** The paging of a list that takes `sort`. */
export interface SortedPageQuery extends PageQuery {
  sort: SortOrder;
}

export interface PageQueryRules<Sortable extends boolean> {
  maxPageSize: number;
  defaultPageSize: number;
  /** The shape of the listed resource's IDs: any other `after` is malformed. */
  cursor: RegExp;
  /** The listed kind, as a malformed `after` is told: "must be the ID of a listed group". */
  listed: string;
  /** Whether the list takes `sort`; one that does not (creation order only) refuses it as an unknown parameter, and its query has none. */
  sortable: Sortable;
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

/** A list's query parser: its paging parameters, and the others checked against the list's `filters` (`NO_FIELDS` for none). */
export type PageQueryParser<Q extends PageQuery> = <S extends v.GenericSchema<unknown, object>>(ctx: RequestContext, filters: S) => v.InferOutput<S> & Q;

/**
 * Builds the parser of a list's query: `page_size`, `after` and (`sortable`) `sort`, out-of-range or
 * malformed values answering 400 `E_VALIDATION` naming the parameter, never a silently clamped page;
 * any other parameter is checked against the list's filters, and one they do not name is a 400.
 */
export function pageQueryParser(rules: PageQueryRules<true>): PageQueryParser<SortedPageQuery>;
export function pageQueryParser(rules: PageQueryRules<false>): PageQueryParser<PageQuery>;
export function pageQueryParser(rules: PageQueryRules<boolean>): PageQueryParser<PageQuery | SortedPageQuery> {
  const { maxPageSize, defaultPageSize, cursor, listed, sortable } = rules;
  const params = new Set(sortable ? ['page_size', 'after', 'sort'] : ['page_size', 'after']);
  const schema = v.object({
    page_size: v.optional(pageSizeParam(maxPageSize), String(defaultPageSize)),
    after: v.optional(v.pipe(v.string(ONCE), v.regex(cursor, `must be the ID of a listed ${listed}`))),
    sort: v.optional(v.picklist(['asc', 'desc'], 'must be asc or desc'), 'asc'),
  });
  return (ctx, filters) => {
    const filtered = parseQuery(ctx, filters, params);
    const query = ctx.query();
    const given: Record<string, string | string[]> = {};
    for (const name of params) {
      const values = query.getAll(name);
      if (values.length > 0) given[name] = values.length === 1 ? values[0] : values;
    }
    const parsed = parseInput(schema, given);
    const page = { ...filtered, pageSize: parsed.page_size, after: parsed.after };
    return sortable ? { ...page, sort: parsed.sort } : page;
  };
}
