import { firstRequest, writeRawScript, writeRequestScript, type RequestShape } from './lua.js';
import { runWrk, type WrkResult, type WrkRun } from './wrk.js';
import { cpuSeconds, loopCpuSeconds, majorFaults } from './service-process.js';
import type { ServiceClient } from './client.js';
import type { ChainedLoad } from './scenarios.js';

export interface LoadSettings {
  /** Measured seconds per route (and as many for its ceiling), split into `rounds`. */
  seconds: number;
  rounds: number;
  warmupSeconds: number;
  connections: number;
  threads: number;
  /** Where scripts and their pools are written. */
  dir: string;
}

/** A server under load: where wrk sends requests and which process answers them. */
export interface Target {
  url: string;
  pid: number;
}

/** wrk's figures plus the answering process's CPU time per request (steadier than req/s on a shared machine). */
export interface Measured extends WrkResult {
  cpuMicrosPerRequest: number;
  /** The event-loop thread's share of that CPU time. */
  loopCpuMicrosPerRequest: number;
  /** Major page faults (reads from disk) per 1000 requests. */
  majorFaultsPerThousand: number;
}

export interface PairedMeasurement {
  route: Measured;
  ceiling: Measured;
  rounds: { route: Measured; ceiling: Measured }[];
}

async function runMeasured(target: Target, run: Omit<WrkRun, 'url'>): Promise<Measured> {
  const cpuBefore = await cpuSeconds(target.pid);
  const loopBefore = await loopCpuSeconds(target.pid);
  const faultsBefore = await majorFaults(target.pid);
  const result = await runWrk({ ...run, url: target.url });
  const faults = (await majorFaults(target.pid)) - faultsBefore;
  const cpu = (await cpuSeconds(target.pid)) - cpuBefore;
  const loop = (await loopCpuSeconds(target.pid)) - loopBefore;
  const perRequest = (seconds: number) => (seconds * 1e6) / Math.max(1, result.requests);
  return {
    ...result,
    cpuMicrosPerRequest: perRequest(cpu),
    loopCpuMicrosPerRequest: perRequest(loop),
    majorFaultsPerThousand: (faults * 1000) / Math.max(1, result.requests),
  };
}

/** The wrk scripts of a scenario: the route's, and the one that drives the ceiling (none: plain GETs). */
export interface Scripts {
  route: string;
  ceiling?: string;
}

/**
 * Measures a route and the ceiling in alternating rounds, so the noise of a shared machine falls on
 * both alike. Each is warmed up first; the warm-up's figures are dropped.
 */
export async function measurePaired(ceiling: Target, route: Target, scripts: Scripts, settings: LoadSettings): Promise<PairedMeasurement> {
  // A route on fewer connections than threads (the list page's one) gets a thread per connection: wrk refuses more.
  const common = { connections: settings.connections, threads: Math.min(settings.threads, settings.connections) };
  const script = scripts.route;
  if (settings.warmupSeconds > 0) {
    await runWrk({ ...common, url: ceiling.url, script: scripts.ceiling, seconds: settings.warmupSeconds });
    await runWrk({ ...common, url: route.url, script, seconds: settings.warmupSeconds });
  }
  const seconds = Math.max(1, Math.round(settings.seconds / settings.rounds));
  const rounds: PairedMeasurement['rounds'] = [];
  for (let r = 0; r < settings.rounds; r++) {
    rounds.push({
      ceiling: await runMeasured(ceiling, { ...common, script: scripts.ceiling, seconds }),
      route: await runMeasured(route, { ...common, script, seconds }),
    });
  }
  return { route: combine(rounds.map((r) => r.route)), ceiling: combine(rounds.map((r) => r.ceiling)), rounds };
}

/** The middle value (the lower of the two middle ones for an even count). */
export const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];

/**
 * How much memory grew over a series of readings (RssAnon after each interval), as a fraction: the lowest
 * reading of the later half against the lowest of the earlier half (the middle one in both for an odd
 * count). Each reading falls anywhere in the collector's cycle, so one is not compared with another: a leak
 * raises the floor.
 */
export function floorGrowth(readings: readonly number[]): number {
  const floor = (part: readonly number[]) => Math.min(...part);
  return floor(readings.slice(Math.floor(readings.length / 2))) / floor(readings.slice(0, Math.ceil(readings.length / 2))) - 1;
}

/** Totals over rounds: the overall rate, the median p50 and the worst p99 (percentiles do not add up). */
function combine(results: readonly Measured[]): Measured {
  const sum = (pick: (r: Measured) => number) => results.reduce((total, r) => total + pick(r), 0);
  const worst = (pick: (r: Measured) => number) => Math.max(...results.map(pick));
  const requests = sum((r) => r.requests);
  const seconds = sum((r) => r.seconds);
  return {
    requests,
    seconds,
    requestsPerSecond: requests / seconds,
    cpuMicrosPerRequest: sum((r) => r.cpuMicrosPerRequest * r.requests) / Math.max(1, requests),
    loopCpuMicrosPerRequest: sum((r) => r.loopCpuMicrosPerRequest * r.requests) / Math.max(1, requests),
    majorFaultsPerThousand: sum((r) => r.majorFaultsPerThousand * r.requests) / Math.max(1, requests),
    p50Ms: median(results.map((r) => r.p50Ms)),
    p75Ms: worst((r) => r.p75Ms),
    p90Ms: worst((r) => r.p90Ms),
    p99Ms: worst((r) => r.p99Ms),
    non2xx: sum((r) => r.non2xx),
    socketErrors: {
      connect: sum((r) => r.socketErrors.connect),
      read: sum((r) => r.socketErrors.read),
      write: sum((r) => r.socketErrors.write),
      timeout: sum((r) => r.socketErrors.timeout),
    },
  };
}

const isChained = (load: RequestShape | ChainedLoad): load is ChainedLoad => 'lua' in load;

/**
 * Writes the scripts of a scenario's load; a request shape is first sent once, so a missing route
 * skips early. The ceiling is driven by the same request-shape script: wrk's own cost per request
 * (a pool of a million IDs in Lua is not free) then falls on both sides of the ratio. A chained
 * load reacts to the route's answers, which the ceiling does not give, so its ceiling gets plain GETs.
 */
export async function prepareScripts(client: ServiceClient, name: string, load: RequestShape | ChainedLoad, dir: string): Promise<Scripts> {
  const file = name.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
  if (isChained(load)) return { route: await writeRawScript(dir, file, load.lua) };
  const probe = firstRequest(load);
  await client.call(probe.method, probe.path, { headers: probe.headers, body: probe.body === undefined ? undefined : JSON.parse(probe.body) });
  const script = await writeRequestScript(dir, file, load);
  return { route: script, ceiling: script };
}

/**
 * Why a route's figures are not throughput, if they are not: a round that answered nothing (a request
 * left unanswered is no wrk error: wrk checks for timeouts every 2 s, after 5 s, never within a round
 * of 1–2 s, and reports 0 requests and a p99 of 0), or more than 0.1% of requests failed; the same of
 * its ceiling.
 */
export function untrusted(measured: PairedMeasurement): string | undefined {
  // The ratio divides by the ceiling: a ceiling that failed would make it anything.
  for (const [side, label] of [['route', ''], ['ceiling', 'the ceiling: ']] as const) {
    if (measured.rounds.some((round) => round[side].requests === 0)) return `${label}a round answered no request (none failed: they went unanswered)`;
    const { non2xx, socketErrors, requests } = measured[side];
    const share = (non2xx + socketErrors.connect + socketErrors.read + socketErrors.write + socketErrors.timeout) / requests;
    if (share > 0.001) return `${label}${(share * 100).toFixed(1)}% of requests failed (non-2xx or socket errors)`;
  }
  return undefined;
}
