import type { TestServer, TestApp, TestResponse } from './server.js';

export interface SignedIn {
  access_token: string;
  refresh_token: string;
  app_user_id: string;
  link: string;
}

/** The path of a magic link URL (`/hub/auth/magic/<id>`), to request it from the test server. */
export const linkPath = (link: string) => new URL(link).pathname;

/** `POST /hub/auth/magic` for an email address, with any further body fields. */
export const requestLink = (server: TestServer, email: string, extra: Record<string, unknown> = {}, app = server.app) =>
  server.request('POST', '/hub/auth/magic', { app, body: { verification_type: 'email', data: { email }, ...extra } });

/** Signs a user in the way a real client does: a platform magic link for `email`, then its redemption. */
export async function signInByLink(server: TestServer, email: string, app: TestApp = server.app): Promise<SignedIn> {
  const made = await requestLink(server, email, {}, app);
  if (made.status !== 200) throw new Error(`magic link: ${made.status} ${made.text}`);
  const redeemed = await server.request('GET', linkPath(made.body.link));
  if (redeemed.status !== 200) throw new Error(`redeem: ${redeemed.status} ${redeemed.text}`);
  return { ...redeemed.body, link: made.body.link };
}

export const refreshWith = (server: TestServer, refresh_token: unknown): Promise<TestResponse> =>
  server.request('POST', '/hub/auth/token', { body: { refresh_token } });

/** A `/me` call that answers 200 for a live access token (it reads the caller's profile). */
export const meProbe = (server: TestServer, token: string) => server.request('GET', `/me/applications/${server.app.id}/data`, { token });

/** The stored platform profile of a user. */
export const profileOf = (server: TestServer, userId: string, appId = server.app.id) =>
  JSON.parse(Buffer.from(server.deps.profiles.platformBytes(appId, userId)!).toString());

/** Disables or enables a user through the platform state route. */
export async function setUserState(server: TestServer, userId: string, state: 'enabled' | 'disabled'): Promise<void> {
  const res = await server.request('POST', `/applications/${server.app.id}/users/${userId}/state`, {
    app: server.app,
    body: { state },
  });
  if (res.status !== 200) throw new Error(`state: ${res.status} ${res.text}`);
}

/** An OIDC client of `app` with this `config`: where its links may send the browser (its redirect_uris and allowed_origins). */
export async function registerRedirects(
  server: TestServer,
  config: { redirect_uris?: string[]; allowed_origins?: string[] },
  app = server.app,
): Promise<{ id: string }> {
  const res = await server.request('POST', `/applications/${app.id}/oidc-clients`, { app, body: { name: 'Web', config } });
  if (res.status !== 200) throw new Error(`OIDC client create answered ${res.status}: ${res.text}`);
  return res.body;
}
