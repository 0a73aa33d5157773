import type { HttpResponse } from './uws.js';

export interface FilePart {
  data: Buffer;
  contentType: string;
  filename?: string;
}

export type ParsedBody =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown }
  | { kind: 'form'; fields: Record<string, string> }
  | { kind: 'multipart'; fields: Record<string, string>; files: Record<string, FilePart> };

/** What authentication established about the caller. */
export type Caller =
  | { kind: 'app'; appId: string; key: string }
  | {
      kind: 'user';
      appId: string;
      userId: string;
      sessionId: string;
      tokenId: string;
      expiresAt: number;
      /** When the user was created (ms): tells it from an earlier user deleted under the same ID. */
      userCreatedAt: number;
      /**
       * The user's `/me` body as the bearer step read it (`MeView` in view-record.ts: the body, or the
       * record it is put together from, with the schema stamp it was rendered under), for the read
       * handler to answer from; dropped when a step before it changes the user.
       */
      view?: { bytes: Buffer; whole: boolean; schemaStamp: string };
    }
  | { kind: 'admin' };

/**
 * Everything a handler may know about a request, copied out of uWS before any await
 * (the uWS request object is invalid once the handler returns).
 */
export interface RequestContext {
  readonly id: string;
  readonly method: string;
  readonly path: string;
  readonly route: string;
  readonly params: Record<string, string>;
  readonly rawQuery: string;
  /**
   * A header's value (names are lower case); lines given more than once are combined, in order,
   * separated by commas (RFC 9110 §5.3): a proxy may add its `X-Forwarded-For` line after the
   * client's. A header that must come once is refused when repeated, so never read combined.
   */
  header(name: string): string | undefined;
  readonly ip: string;
  readonly startedAt: number;
  body: ParsedBody;
  caller?: Caller;
  aborted: boolean;
  /** Names of headers the request gives more than once (their lines combined by `header`). */
  readonly repeatedHeaders?: readonly string[];
  readonly res: HttpResponse;
  query(): URLSearchParams;
}
