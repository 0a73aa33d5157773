import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServiceClient } from './client.js';
import { luaString, type RequestShape } from './lua.js';
import { profileWriteBody } from './profile-fixture.js';
import { groupWithMembers, signIn } from './seed.js';
import { UsageError } from './options.js';

export interface SeededUser {
  id: string;
  email: string;
  phone: string;
}

/** Paired pools of the users' IDs and addresses, for `{user}`, `{email}` and `{phone}`. */
export const userPools = (users: readonly SeededUser[]) => ({
  user: users.map((u) => u.id),
  email: users.map((u) => u.email),
  phone: users.map((u) => u.phone),
});

export interface SignedInUser {
  userId: string;
  accessToken: string;
}

export interface ScenarioEnv {
  client: ServiceClient;
  /** Seeded users in ID order (the order of the user list); throws what stopped the seeding. */
  users(): readonly SeededUser[];
  /** Users signed in through a magic link, tokens already used once (warm); throws RouteUnavailable without /hub/auth/magic. */
  signedIn(): Promise<readonly SignedInUser[]>;
}

/** A flow wrk chains itself (Lua `response()` feeding the next `request()`), probed by the scenario. */
export interface ChainedLoad {
  lua: string;
}

export interface Bar {
  ratio?: number;
  p99Ms?: number;
}

/**
 * One measured route. `setup` seeds over HTTP what the load needs, proves the route answers (a 404 for
 * an unknown route throws RouteUnavailable, which skips the scenario), and describes the load.
 */
export interface Scenario {
  name: string;
  bar?: Bar;
  /** Requests per logical operation, when an operation is more than one request. */
  requestsPerOperation?: number;
  /** Connections for this route and its paired ceiling, when the default (64) would measure queueing instead. */
  connections?: number;
  /** `dir` is the run's scratch directory (scripts and their data files). */
  setup(env: ScenarioEnv, dir: string): Promise<RequestShape | ChainedLoad>;
}

const usersPath = (env: ScenarioEnv) => `/applications/${env.client.app.id}/users`;
const bearer = (users: readonly SignedInUser[]) => ({
  authorization: 'Bearer {token}',
  pools: { token: users.map((u) => u.accessToken) },
});

/** Users creating groups: 1 024 000 groups before one reaches its cap, against ~3–5k made a second. */
const GROUP_CREATORS = 1024;

/** A full page of members (the most a page holds), each with its user's profile card. */
const MEMBER_PAGE = 100;

/** The groups each user of the read of users in groups is a member of: a body lists each group's rendering. */
const READ_GROUPS = 4;

/** The durable write; the bench measures the storage floor on its data set right after it. */
export const PROFILE_WRITE: Scenario = {
  name: 'profile write (PUT, durable)',
  bar: { ratio: 0.15, p99Ms: 10 },
  setup: async (env) => ({
    method: 'PUT',
    path: `${usersPath(env)}/{user}/data`,
    headers: { ...env.client.platformHeaders, 'content-type': 'application/json' },
    body: profileWriteBody({ first_name: 'Written', last_name: 'W{n}', plan: 'pro', score: 7 }),
    pools: userPools(env.users()),
  }),
};

export const scenarios: readonly Scenario[] = [
  {
    name: 'health (kernel floor)',
    setup: async () => ({ method: 'GET', path: '/health' }),
  },
  {
    name: 'app config (key header)',
    setup: async (env) => ({
      method: 'GET',
      path: '/hub/app-config',
      headers: env.client.keyHeader,
    }),
  },
  {
    name: 'platform profile read',
    bar: { ratio: 0.5, p99Ms: 2 },
    setup: async (env) => ({
      method: 'GET',
      path: `${usersPath(env)}/{user}/data`,
      headers: env.client.platformHeaders,
      pools: { user: env.users().map((u) => u.id) },
    }),
  },
  {
    name: '/me profile read (warm token)',
    bar: { ratio: 0.45 },
    setup: async (env) => {
      const { authorization, pools } = bearer(await env.signedIn());
      return { method: 'GET', path: `/me/applications/${env.client.app.id}/data`, headers: { authorization }, pools };
    },
  },
  PROFILE_WRITE,
  {
    name: 'user list page (1000, any depth)',
    bar: { p99Ms: 25 },
    // The bar is the latency of one page: with 64 pages of ~600 kB in flight p99 measures the queue.
    connections: 1,
    setup: async (env) => {
      // Cursors over the whole range that still leave a full page after them.
      const users = env.users();
      const last = Math.max(1, users.length - 1000);
      const count = Math.min(last, 10_000);
      const cursors = Array.from({ length: count }, (_, k) => users[Math.floor((k * last) / count)].id);
      return {
        method: 'GET',
        path: `${usersPath(env)}/data?page_size=1000&after={cursor}`,
        headers: env.client.platformHeaders,
        pools: { cursor: cursors },
      };
    },
  },
  {
    name: 'group create',
    setup: async (env) => {
      // Each group made on /me is a member record of its creator, who may hold GROUPS_PER_USER_LIMIT:
      // creators enough that a run at any rate measured so far stays far below it.
      const { authorization, pools } = bearer(await signIn(env.client, env.users().slice(0, GROUP_CREATORS)));
      return {
        method: 'POST',
        path: '/me/groups',
        headers: { authorization, 'content-type': 'application/json' },
        body: '{"name":"bench group {n}"}',
        pools,
      };
    },
  },
  {
    name: 'invite create + accept',
    requestsPerOperation: 2,
    setup: async (env, dir) => inviteFlow(env, dir),
  },
  {
    // Last: its members' profiles list the group from here on.
    name: `member list page (${MEMBER_PAGE})`,
    setup: async (env) => {
      const members = env.users().slice(0, MEMBER_PAGE).map((u) => u.id);
      const groupId = await groupWithMembers(env.client, 'member list bench', members);
      return { method: 'GET', path: `/applications/${env.client.app.id}/groups/${groupId}/members?page_size=${MEMBER_PAGE}`, headers: env.client.platformHeaders };
    },
  },
  {
    // Not named a "platform profile read": `--only` would pick it with the bar's read.
    name: `profile read, a user in ${READ_GROUPS} groups`,
    setup: async (env) => {
      // Users of their own (after the member list's), so whichever scenarios run before, each lists READ_GROUPS groups.
      const readers = env.users().slice(MEMBER_PAGE, 2 * MEMBER_PAGE).map((u) => u.id);
      if (readers.length === 0) throw new Error(`reading users in groups needs more than ${MEMBER_PAGE} seeded users`);
      for (let g = 0; g < READ_GROUPS; g++) await groupWithMembers(env.client, `read bench ${g}`, readers);
      return { method: 'GET', path: `${usersPath(env)}/{user}/data`, headers: env.client.platformHeaders, pools: { user: readers } };
    },
  },
];

/** The scenarios whose name contains one of the `--only` fragments (all without any); none is a usage error. */
export function chooseScenarios(only: readonly string[]): readonly Scenario[] {
  const chosen = scenarios.filter((s) => only.length === 0 || only.some((o) => s.name.toLowerCase().includes(o)));
  if (chosen.length === 0) throw new UsageError(`--only ${only.join(',')} names no scenario; they are: ${scenarios.map((s) => s.name).join('; ')}`);
  return chosen;
}

/**
 * The owner (the first signed-in user) invites the other signed-in users, by user ID, to groups made
 * here; each answer is followed by the invitee's `POST …/accept` with its own token. A (group, user)
 * pair is invited once, so every wrk run (warm-up, rounds) resumes from the pair the last one reached.
 */
async function inviteFlow(env: ScenarioEnv, dir: string): Promise<ChainedLoad> {
  const [owner, ...invitees] = await env.signedIn();
  if (invitees.length === 0) throw new Error('inviting needs at least two signed-in users');
  const groups: string[] = [];
  for (let k = 0; k < INVITE_GROUPS; k++) {
    const created = await env.client.call('POST', '/me/groups', { token: owner.accessToken, body: { name: `invite bench ${k}` } });
    groups.push(created.group.id);
  }
  const probe = await env.client.call('POST', `/me/groups/${groups[0]}/invites`, {
    token: owner.accessToken,
    body: { roles: ['member'], user_id: invitees[0].userId },
  });
  await env.client.call('POST', `/me/groups/${groups[0]}/invites/${probe.invitation.id}/accept`, { token: invitees[0].accessToken });
  const offsetFile = join(dir, 'invite-pairs.offset');
  await writeFile(offsetFile, '1'); // the probe used the first pair (n = 0)
  return {
    lua: `
local groups = { ${groups.map(luaString).join(', ')} }
local invitees = { ${invitees.map((u) => luaString(u.userId)).join(', ')} }
local tokens = { ${invitees.map((u) => `[${luaString(u.userId)}] = ${luaString(`Bearer ${u.accessToken}`)}`).join(', ')} }
local owner = { ["authorization"] = ${luaString(`Bearer ${owner.accessToken}`)}, ["content-type"] = "application/json" }
local invitee = {}
local offsetFile = ${luaString(offsetFile)}
local pending = {}
local n
request = function()
  local accept = table.remove(pending)
  if accept then
    invitee["authorization"] = tokens[accept.user]
    return wrk.format("POST", "/me/groups/" .. accept.group .. "/invites/" .. accept.invite .. "/accept", invitee, nil)
  end
  if n == nil then
    local f = io.open(offsetFile, "r"); n = tonumber(f:read("*a")); f:close()
  end
  if n >= #groups * #invitees then wrk.thread:stop() end
  -- Consecutive invites go to different groups and different users, so they queue neither on one group's
  -- lock nor on one invitee's (an invite holds both). For each group the users run through every invitee
  -- once, so each (group, user) pair comes once in #groups * #invitees.
  local g = n % #groups
  local group = groups[g + 1]
  local user = invitees[(math.floor(n / #groups) + g) % #invitees + 1]
  n = n + 1
  local f = io.open(offsetFile, "w"); f:write(n); f:close()
  return wrk.format("POST", "/me/groups/" .. group .. "/invites", owner, '{"roles":["member"],"user_id":"' .. user .. '"}')
end
response = function(status, headers, body)
  local invite = body:match('"id":"(invite_[^"]+)"')
  if status == 200 and invite and body:find('"invitation"', 1, true) then
    pending[#pending + 1] = { invite = invite, group = body:match('"group_id":"([^"]+)"'), user = body:match('"ensured_user_id":"([^"]+)"') }
  end
end
`,
  };
}

/**
 * Groups the invite flow spreads over: with 255 invitees, 25 500 invites, far more than a full run
 * makes at the rates measured so far (under 100 invites a second). Once they are used up, wrk stops sending.
 */
const INVITE_GROUPS = 100;
