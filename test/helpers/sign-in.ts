import type { TestServer, TestApp } from './server.js';

export interface SignedIn {
  access_token: string;
  refresh_token: string;
  app_user_id: string;
  link: string;
}

/** The path of a magic link URL (`/hub/auth/magic/<id>`), to request it from the test server. */
export const linkPath = (link: string) => new URL(link).pathname;

/** Signs a user in the way a real client does: a platform magic link for `email`, then its redemption. */
export async function signInByLink(server: TestServer, email: string, app: TestApp = server.app): Promise<SignedIn> {
  const made = await server.request('POST', '/hub/auth/magic', {
    app,
    body: { verification_type: 'email', data: { email } },
  });
  if (made.status !== 200) throw new Error(`magic link: ${made.status} ${made.text}`);
  const redeemed = await server.request('GET', linkPath(made.body.link));
  if (redeemed.status !== 200) throw new Error(`redeem: ${redeemed.status} ${redeemed.text}`);
  return { ...redeemed.body, link: made.body.link };
}
