import { NO_BODY } from './body.js';
import type { Caller, ParsedBody, RequestContext } from './context.js';
import type { HttpRequest, HttpResponse } from './uws.js';

/**
 * A request's context, copied out of uWS while its request object is valid. A class rather than an
 * object literal: one is made per request, and a literal with a getter and closures costs more.
 */
export class HttpRequestContext implements RequestContext {
  readonly method: string;
  readonly path: string;
  readonly params: Record<string, string> = {};
  readonly rawQuery: string;
  readonly headers: Record<string, string> = {};
  readonly startedAt = performance.now();
  body: ParsedBody = NO_BODY;
  caller: Caller | undefined = undefined;
  aborted = false;
  /**
   * Names of headers the request gives more than once. Their lines are combined in `headers`, in
   * order, separated by commas (RFC 9110 §5.3): a proxy may add its `X-Forwarded-For` line after the
   * client's. A header that must come once is refused when repeated, so never read combined.
   */
  repeatedHeaders: string[] | undefined = undefined;
  private remoteAddress: string | undefined = undefined;
  private parsedQuery: URLSearchParams | undefined = undefined;

  constructor(
    readonly id: string,
    readonly route: string,
    readonly res: HttpResponse,
    req: HttpRequest,
    paramNames: readonly string[],
  ) {
    const headers = this.headers;
    req.forEach((key, value) => {
      const earlier = headers[key];
      if (earlier === undefined) headers[key] = value;
      else {
        (this.repeatedHeaders ??= []).push(key);
        headers[key] = `${earlier}, ${value}`;
      }
    });
    for (let i = 0; i < paramNames.length; i++) this.params[paramNames[i]] = req.getParameter(i) ?? '';
    this.rawQuery = req.getQuery() ?? '';
    this.method = req.getCaseSensitiveMethod().toUpperCase();
    this.path = req.getUrl();
  }

  /** Read on first use only: uWS hands the address out as bytes. */
  get ip(): string {
    return (this.remoteAddress ??= Buffer.from(this.res.getRemoteAddressAsText()).toString());
  }

  query(): URLSearchParams {
    return (this.parsedQuery ??= new URLSearchParams(this.rawQuery));
  }
}
