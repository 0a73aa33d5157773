import type { ServiceClient } from './client.js';
import { luaString, type RequestShape } from './lua.js';

export interface SeededUser {
  id: string;
  email: string;
}

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
  setup(env: ScenarioEnv): Promise<RequestShape | ChainedLoad>;
}

const usersPath = (env: ScenarioEnv) => `/applications/${env.client.app.id}/users`;
const bearer = (users: readonly SignedInUser[]) => ({
  authorization: 'Bearer {token}',
  pools: { token: users.map((u) => u.accessToken) },
});

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
  {
    name: 'profile write (PUT, durable)',
    bar: { ratio: 0.15, p99Ms: 10 },
    setup: async (env) => ({
      method: 'PUT',
      path: `${usersPath(env)}/{user}/data`,
      headers: { ...env.client.platformHeaders, 'content-type': 'application/json' },
      body: '{"data":{"email":"{email}","first_name":"Written","last_name":"W{n}","plan":"pro","score":7}}',
      pools: { user: env.users().map((u) => u.id), email: env.users().map((u) => u.email) },
    }),
  },
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
      const { authorization, pools } = bearer(await env.signedIn());
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
    setup: async (env) => inviteFlow(env),
  },
];

/**
 * Invites go to fresh email addresses across a few groups of one owner; each answer's magic link is
 * redeemed by the next request (GET the link as JSON), which accepts the invite.
 */
async function inviteFlow(env: ScenarioEnv): Promise<ChainedLoad> {
  const [owner] = await env.signedIn();
  const groups: string[] = [];
  for (let k = 0; k < 8; k++) {
    const created = await env.client.call('POST', '/me/groups', { token: owner.accessToken, body: { name: `invite bench ${k}` } });
    groups.push(created.group.id);
  }
  const invite = await env.client.call('POST', `/me/groups/${groups[0]}/invites`, {
    token: owner.accessToken,
    body: { roles: ['member'], email: `invite-probe-${Date.now()}@example.com` },
  });
  if (typeof invite.link !== 'string') throw new Error('invite create answered no link, so accepting through it cannot be measured');
  const accepted = await env.client.call('GET', linkPath(invite.link));
  if (!accepted.access_token) throw new Error('redeeming an invite link answered no access_token');
  return {
    lua: `
local groups = { ${groups.map(luaString).join(', ')} }
local owner = { ["authorization"] = ${luaString(`Bearer ${owner.accessToken}`)}, ["content-type"] = "application/json" }
local redeem = { ["accept"] = "application/json" }
local run = ${luaString(String(Date.now()))}
local links = {}
local n = 0
request = function()
  local link = table.remove(links)
  if link then return wrk.format("GET", link, redeem, nil) end
  n = n + 1
  local body = '{"roles":["member"],"email":"invitee-' .. run .. '-' .. n .. '@example.com"}'
  return wrk.format("POST", "/me/groups/" .. groups[n % #groups + 1] .. "/invites", owner, body)
end
response = function(status, headers, body)
  local link = body:match('"link":"https?://[^/"]+(/[^"]+)"')
  if link then links[#links + 1] = link end
end
`,
  };
}

export const linkPath = (link: string) => new URL(link).pathname;
