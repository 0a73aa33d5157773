import { firstRequest, writeRawScript, writeRequestScript, type RequestShape } from './lua.js';
import { runWrk, type WrkResult } from './wrk.js';
import type { ServiceClient } from './client.js';
import type { ChainedLoad } from './scenarios.js';

export interface LoadSettings {
  seconds: number;
  warmupSeconds: number;
  connections: number;
  threads: number;
  /** Where scripts and their pools are written. */
  dir: string;
}

/** Warms up, then measures; the warm-up's figures are dropped. */
export async function measure(url: string, script: string | undefined, settings: LoadSettings, seconds = settings.seconds): Promise<WrkResult> {
  const run = { url, script, connections: settings.connections, threads: settings.threads };
  if (settings.warmupSeconds > 0) await runWrk({ ...run, seconds: settings.warmupSeconds });
  return runWrk({ ...run, seconds });
}

const isChained = (load: RequestShape | ChainedLoad): load is ChainedLoad => 'lua' in load;

/** Writes the script of a scenario's load; a request shape is first sent once, so a missing route skips early. */
export async function prepareScript(client: ServiceClient, name: string, load: RequestShape | ChainedLoad, dir: string): Promise<string> {
  const file = name.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
  if (isChained(load)) return writeRawScript(dir, file, load.lua);
  const probe = firstRequest(load);
  await client.call(probe.method, probe.path, { headers: probe.headers, body: probe.body === undefined ? undefined : JSON.parse(probe.body) });
  return writeRequestScript(dir, file, load);
}

/** Errors worth distrusting a figure for: more than 0.1% of requests failed. */
export function errorShare(result: WrkResult): number {
  const { connect, read, write, timeout } = result.socketErrors;
  return (result.non2xx + connect + read + write + timeout) / Math.max(1, result.requests);
}
