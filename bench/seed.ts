import { runConcurrently, type ServiceClient } from './client.js';
import { seedProfile } from './profile-fixture.js';
import type { SeededUser, SignedInUser } from './scenarios.js';

export interface Seeding {
  users: SeededUser[];
  seconds: number;
  usersPerSecond: number;
}

/** Creates `count` users one PUT each (the only creation path the API has), many in flight. */
export async function seedUsers(
  client: ServiceClient,
  count: number,
  concurrency: number,
  onProgress?: (done: number) => void,
): Promise<Seeding> {
  const users: SeededUser[] = new Array(count);
  const startedAt = performance.now();
  let done = 0;
  await runConcurrently(count, concurrency, async (n) => {
    const profile = seedProfile(n);
    const created = await client.call('PUT', `/applications/${client.app.id}/users/__uuid__/data`, {
      platform: true,
      body: profile,
    });
    users[n] = { id: created[client.userField], email: profile.data.email as string, phone: profile.data.phone_number as string };
    if (++done % 10_000 === 0) onProgress?.(done);
  });
  const seconds = (performance.now() - startedAt) / 1000;
  users.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { users, seconds, usersPerSecond: count / seconds };
}

/** A platform group named `name` whose active members (role `member`) are `userIds`, 16 added at a time; answers its ID. */
export async function groupWithMembers(client: ServiceClient, name: string, userIds: readonly string[]): Promise<string> {
  const groupsPath = `/applications/${client.app.id}/groups`;
  const group = await client.call('POST', groupsPath, { platform: true, body: { name } });
  await runConcurrently(userIds.length, 16, (i) =>
    client.call('POST', `${groupsPath}/${group.id}/members`, { platform: true, body: { user_id: userIds[i], roles: ['member'], state: 'active' } }),
  );
  return group.id;
}

/** Signs seeded users in through platform magic links (ADDENDUM §4) and uses each token once; answers them in `users`' order. */
export async function signIn(client: ServiceClient, users: readonly SeededUser[]): Promise<SignedInUser[]> {
  const signedIn: SignedInUser[] = new Array(users.length);
  await runConcurrently(users.length, SIGN_IN_CONCURRENCY, async (i) => {
    const magic = await client.call('POST', '/hub/auth/magic', {
      platform: true,
      body: { verification_type: 'email', data: { email: users[i].email } },
    });
    // The link names the public URL; the bench talks to the same server on its own address.
    const tokens = await client.call('GET', new URL(magic.link).pathname);
    await client.call('GET', `/me/applications/${client.app.id}/data`, { token: tokens.access_token });
    signedIn[i] = { userId: tokens.app_user_id, accessToken: tokens.access_token };
  });
  return signedIn;
}

/** Sign-ins in flight: each is three requests, one of them a durable write. */
const SIGN_IN_CONCURRENCY = 16;
