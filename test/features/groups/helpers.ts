import type { TestServer } from '../../helpers/server.js';
import { tokenFor } from '../../helpers/tokens.js';
import { verifyStore } from '../../../src/verify/invariants.js';
import { groupInvariants } from '../../../src/features/groups/invariants.js';

export interface Person {
  userId: string;
  token: string;
}

export const person = (server: TestServer, email: string): Promise<Person> => tokenFor(server, { email });

/** A group made through `POST /me/groups` by `owner`. */
export async function groupOf(server: TestServer, owner: Person, name = 'Crew') {
  const res = await server.request('POST', '/me/groups', { token: owner.token, body: { name } });
  if (res.status !== 200) throw new Error(`group create answered ${res.status}: ${res.text}`);
  return res.body as { group: any; member: any };
}

/** The `groups` array of a user's prepared platform profile. */
export function profileGroups(server: TestServer, userId: string, appId = server.app.id): any[] {
  const bytes = server.deps.profiles.platformBytes(appId, userId);
  if (!bytes) throw new Error(`no profile for ${userId}`);
  return JSON.parse(Buffer.from(bytes).toString()).groups;
}

/** Platform request helper bound to the default app's credentials. */
export const platform = (server: TestServer) => ({
  get: (path: string) => server.request('GET', `/applications/${server.app.id}${path}`, { app: server.app }),
  post: (path: string, body?: unknown) => server.request('POST', `/applications/${server.app.id}${path}`, { app: server.app, body }),
  put: (path: string, body?: unknown) => server.request('PUT', `/applications/${server.app.id}${path}`, { app: server.app, body }),
  patch: (path: string, body?: unknown) => server.request('PATCH', `/applications/${server.app.id}${path}`, { app: server.app, body }),
  del: (path: string) => server.request('DELETE', `/applications/${server.app.id}${path}`, { app: server.app }),
});

/** `/me` request helper for one person. */
export const as = (server: TestServer, who: Person) => ({
  get: (path: string) => server.request('GET', path, { token: who.token }),
  post: (path: string, body?: unknown) => server.request('POST', path, { token: who.token, body }),
  put: (path: string, body?: unknown) => server.request('PUT', path, { token: who.token, body }),
  del: (path: string) => server.request('DELETE', path, { token: who.token }),
});

interface Assert {
  same(found: unknown, wanted: unknown, message: string): unknown;
}

/**
 * Each user's profile `groups` (`GET /applications/{app}/users/{user}/data`) equals what the group
 * endpoints answer right now for those groups and members (the member without its `profile`).
 */
export async function assertProfilesConsistent(t: Assert, server: TestServer, userIds: string[]): Promise<void> {
  const api = platform(server);
  for (const userId of userIds) {
    const listed = (await api.get(`/users/${userId}/data`)).body.groups;
    t.same(listed, profileGroups(server, userId), 'the profile endpoint serves the read model');
    const expected = [];
    for (const { group } of listed) {
      const [g, members] = await Promise.all([api.get(`/groups/${group.id}`), api.get(`/groups/${group.id}/members?lookup_filter=${userId}`)]);
      const { profile, ...member } = members.body.results[0] ?? {};
      expected.push({ group: g.body, member });
    }
    t.same(listed, expected, `profile groups of ${userId} match the groups`);
  }
  t.same(verifyStore(server.deps, groupInvariants).problems, [], 'no member lacks its pair, no pair its member');
}
