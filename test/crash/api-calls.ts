import type { CrashContext } from './write-kinds.js';

export const ADMIN_TOKEN = 'crash-test-admin-token-0123';

export const platformHeaders = ({ defaultApp }: CrashContext) => ({
  'x-svc-app-key': defaultApp.key,
  'x-svc-app-secret': defaultApp.secret,
  'content-type': 'application/json',
});

/** One call with app credentials (or `token`'s bearer), JSON or `form` body; the answer's status and JSON body. */
export async function call(context: CrashContext, method: string, path: string, options: { body?: unknown; token?: string; form?: FormData } = {}) {
  const { 'content-type': _json, ...credentials } = platformHeaders(context);
  const headers: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : credentials;
  headers.accept = 'application/json';
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(context.server.url + path, {
    method,
    headers,
    body: options.form ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
  });
  const text = await res.text();
  return { status: res.status, body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined };
}

/** Gives the default app a `file` and an `image` field, so that write kinds can store files with their users. */
export async function prepareApp({ server, defaultApp }: CrashContext): Promise<void> {
  const res = await fetch(`${server.url}/admin/applications/${defaultApp.id}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ schema: { fields: { doc: { type: 'file' }, photo: { type: 'image' } }, allow_unknown_fields: true } }),
  });
  if (!res.ok) throw new Error(`The crash test's schema was refused: ${res.status} ${await res.text()}`);
}
