/** What a handler answers; the kernel turns it into bytes inside one corked write. */
export interface Reply {
  status: number;
  /** JSON-serialised unless `bytes` is given. */
  body?: unknown;
  /** Prepared bytes sent as-is (the read model path), with `contentType`. */
  bytes?: Uint8Array | string;
  contentType?: string;
  headers?: Record<string, string>;
  /** The kernel closes the connection after this answer. */
  closeConnection?: true;
}

export const ok = (body: unknown): Reply => ({ status: 200, body });

export const noContent = (): Reply => ({ status: 204 });

export const jsonBytes = (bytes: Uint8Array | string, status = 200): Reply => ({
  status,
  bytes,
  contentType: 'application/json',
});

export const redirect = (location: string): Reply => ({ status: 302, headers: { location } });
