import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WRK_INSTALL_HINT, runWrk, wrkAvailable, type WrkResult } from './wrk.js';
import { rssAnonBytes, startService } from './service-process.js';
import { serviceClient, type ServiceClient } from './client.js';
import { groupWithMembers, seedUsers, signIn } from './seed.js';
import { luaString, writeRawScript } from './lua.js';
import { writeResults } from './report.js';
import { numberOption, parseCommandLine, UNLIMITED } from './options.js';
import { runMain } from './main.js';
import { floorGrowth, median } from './measure.js';

// The soak (issue 7): a bounded mixed load (platform reads, /me reads, profile writes, group updates) in
// intervals, reading the service's RssAnon after each, to show that memory stays flat and p99 stable.
// `npm run bench:soak -- [--minutes 5] [--interval 30] [--users 2000]`.

const log = (message: string) => process.stderr.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

interface Interval extends WrkResult {
  atSeconds: number;
  rssAnonMb: number;
}

const GROUPS = 8;
const MEMBERS_PER_GROUP = 100;

/**
 * Groups whose members are among the seeded users (each user in one), so reads of those users fill in
 * a group's rendering and the group updates of the mix rewrite renderings that reads then serve.
 */
async function soakGroups(client: ServiceClient, userIds: readonly string[]): Promise<string[]> {
  const groups: string[] = [];
  for (let g = 0; g < GROUPS; g++) {
    const members = userIds.slice(g * MEMBERS_PER_GROUP, (g + 1) * MEMBERS_PER_GROUP);
    if (members.length === 0) break;
    groups.push(await groupWithMembers(client, `soak group ${g}`, members));
  }
  return groups;
}

function mixedLoadLua(appId: string, platform: Record<string, string>, userIds: readonly string[], tokens: readonly string[], groupIds: readonly string[]): string {
  const list = (values: readonly string[]) => `{${values.map(luaString).join(',')}}`;
  const headerLines = Object.entries(platform)
    .map(([name, value]) => `  h[${luaString(name)}] = ${luaString(value)}`)
    .join('\n');
  return `
local users = ${list(userIds)}
local tokens = ${list(tokens)}
local groups = ${list(groupIds)}
local app = ${luaString(appId)}
local n = 0
request = function()
  n = n + 1
  local user = users[math.random(#users)]
  local pick = math.random(100)
  local h = {}
  if pick <= 15 then
    h["authorization"] = "Bearer " .. tokens[math.random(#tokens)]
    return wrk.format("GET", "/me/applications/" .. app .. "/data", h, nil)
  end
${headerLines}
  if pick <= 30 then
    h["content-type"] = "application/json"
    local body = '{"data":{"first_name":"Soak ' .. n .. '","email":"soak-' .. user .. '@example.com"}}'
    return wrk.format("PUT", "/applications/" .. app .. "/users/" .. user .. "/data", h, body)
  end
  if pick <= 35 then
    h["content-type"] = "application/json"
    local group = groups[math.random(#groups)]
    return wrk.format("PUT", "/applications/" .. app .. "/groups/" .. group, h, '{"meta":{"soak":' .. n .. '}}')
  end
  return wrk.format("GET", "/applications/" .. app .. "/users/" .. user .. "/data", h, nil)
end
`;
}

async function main(): Promise<number> {
  const usage = 'usage: npm run bench:soak -- [--minutes M] [--interval S] [--users N]';
  const values = parseCommandLine(
    process.argv.slice(2),
    { minutes: { type: 'string', default: '5' }, interval: { type: 'string', default: '30' }, users: { type: 'string', default: '2000' } },
    usage,
  );
  const minutes = numberOption('minutes', values.minutes, 0.1, { fraction: true, usage });
  const interval = numberOption('interval', values.interval, 1, { fraction: true, usage });
  const userCount = numberOption('users', values.users, 1, { usage });
  if (!wrkAvailable()) {
    process.stderr.write(`${WRK_INSTALL_HINT}\n`);
    return 2;
  }
  const startedAt = new Date();
  const work = await mkdtemp(join(tmpdir(), 'svc-soak-'));
  const service = await startService({ dataDir: join(work, 'data'), env: UNLIMITED });
  try {
    if (!service.credentials) throw new Error('the service printed no default application credentials');
    const client = serviceClient(service.baseUrl, service.credentials);
    log(`seeding ${userCount} users, signing 64 in`);
    const { users } = await seedUsers(client, userCount, 128);
    const signedIn = await signIn(client, users.slice(0, 64));
    const userIds = users.map((u) => u.id);
    const groupIds = await soakGroups(client, userIds);
    log(`${groupIds.length} groups of up to ${MEMBERS_PER_GROUP} members`);
    const lua = mixedLoadLua(client.app.id, client.platformHeaders, userIds, signedIn.map((s) => s.accessToken), groupIds);
    const script = await writeRawScript(work, 'soak', lua);
    const intervals: Interval[] = [];
    const rounds = Math.max(2, Math.round((minutes * 60) / interval));
    log(`${rounds} intervals of ${interval}s: 65% platform reads, 15% /me reads, 15% profile writes, 5% group updates, 64 connections`);
    for (let i = 0; i < rounds; i++) {
      const result = await runWrk({ url: service.baseUrl, seconds: interval, connections: 64, threads: 1, script });
      const death = service.died();
      if (death) throw new Error(`the service exited during the soak (${death})`);
      const rssAnonMb = (await rssAnonBytes(service.pid)) / 2 ** 20;
      intervals.push({ ...result, atSeconds: (i + 1) * interval, rssAnonMb });
      log(`  ${(i + 1) * interval}s: ${result.requestsPerSecond.toFixed(0)} req/s, p99 ${result.p99Ms.toFixed(1)} ms, RssAnon ${rssAnonMb.toFixed(0)} MB, non-2xx ${result.non2xx}`);
    }
    // The first interval warms up (JIT, actor cache filling): growth is judged from the second on.
    const settled = intervals.slice(1);
    const memoryGrowth = floorGrowth(settled.map((r) => r.rssAnonMb));
    const p99s = settled.map((r) => r.p99Ms);
    const p99Spread = Math.max(...p99s) / median(p99s);
    const failures = intervals.reduce((sum, r) => sum + r.non2xx, 0);
    const summary = {
      memoryGrowthAfterWarmup: memoryGrowth,
      p99MedianMs: median(p99s),
      p99WorstOverMedian: p99Spread,
      non2xx: failures,
      memoryFlat: memoryGrowth <= 0.1,
      p99Stable: p99Spread <= 3,
    };
    process.stdout.write(
      `\ninterval  req/s   p50 ms  p99 ms  RssAnon MB  non-2xx\n${intervals
        .map((r) => `${String(r.atSeconds).padStart(6)}s  ${r.requestsPerSecond.toFixed(0).padStart(6)}  ${r.p50Ms.toFixed(2).padStart(6)}  ${r.p99Ms.toFixed(1).padStart(6)}  ${r.rssAnonMb.toFixed(0).padStart(10)}  ${String(r.non2xx).padStart(7)}`)
        .join('\n')}\n\nmemory after warm-up: ${(memoryGrowth * 100).toFixed(1)}% (${summary.memoryFlat ? 'flat' : 'GROWING'}); ` +
        `p99 worst/median ${p99Spread.toFixed(2)} (${summary.p99Stable ? 'stable' : 'UNSTABLE'}); non-2xx ${failures}\n`,
    );
    const file = await writeResults({ kind: 'soak', startedAt: startedAt.toISOString(), minutes, interval, users: userCount, intervals, summary }, startedAt);
    process.stdout.write(`results: ${file}\n`);
    return summary.memoryFlat && summary.p99Stable && failures === 0 ? 0 : 1;
  } finally {
    await service.stop();
    await rm(work, { recursive: true, force: true });
  }
}

void runMain(main);
