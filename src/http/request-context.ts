import { NO_BODY } from './body.js';
import type { Caller, ParsedBody, RequestContext } from './context.js';
import type { HttpRequest, HttpResponse } from './uws.js';
import { readUrlEncoded } from './url-encoded.js';

/**
 * A request's context, copied out of uWS while its request object is valid. A class rather than an
 * object literal: one is made per request, and a literal with a getter and closures costs more.
 */
export class HttpRequestContext implements RequestContext {
  readonly path: string;
  readonly params: Record<string, string> = {};
  readonly rawQuery: string;
  readonly startedAt = performance.now();
  body: ParsedBody = NO_BODY;
  caller: Caller | undefined = undefined;
  aborted = false;
  /**
   * The header lines in order, as two lists rather than a record: a record keyed by the names uWS
   * hands out makes V8 hash and intern each one, ~0.1 µs a header on every request (docs/PERFORMANCE.md, fourteenth round).
   */
  private readonly headerNames: string[] = [];
  private readonly headerValues: string[] = [];
  /** `repeatedHeaders` once worked out; null until first asked. */
  private repeated: string[] | undefined | null = null;
  private remoteAddress: string | undefined = undefined;
  private parsedQuery: URLSearchParams | undefined = undefined;

  /** `method` is the route's, when a route was bound to one; otherwise the request's is read. */
  constructor(
    readonly id: string,
    readonly route: string,
    readonly res: HttpResponse,
    req: HttpRequest,
    paramNames: readonly string[],
    readonly method = req.getCaseSensitiveMethod().toUpperCase(),
  ) {
    const names = this.headerNames;
    const values = this.headerValues;
    req.forEach((name, value) => {
      names.push(name);
      values.push(value);
    });
    for (let i = 0; i < paramNames.length; i++) this.params[paramNames[i]] = req.getParameter(i) ?? '';
    this.rawQuery = req.getQuery() ?? '';
    this.path = req.getUrl();
  }

  header(name: string): string | undefined {
    const names = this.headerNames;
    let value: string | undefined;
    for (let i = 0; i < names.length; i++) {
      if (names[i] === name) value = value === undefined ? this.headerValues[i] : `${value}, ${this.headerValues[i]}`;
    }
    return value;
  }

  get repeatedHeaders(): readonly string[] | undefined {
    if (this.repeated !== null) return this.repeated;
    const names = this.headerNames;
    let repeated: string[] | undefined;
    for (let i = 1; i < names.length; i++) {
      if (names.indexOf(names[i]) < i && !repeated?.includes(names[i])) (repeated ??= []).push(names[i]);
    }
    return (this.repeated = repeated);
  }

  /** Read on first use only: uWS hands the address out as bytes. */
  get ip(): string {
    return (this.remoteAddress ??= Buffer.from(this.res.getRemoteAddressAsText()).toString());
  }

  query(): URLSearchParams {
    return (this.parsedQuery ??= readUrlEncoded(this.rawQuery, 'query'));
  }
}
