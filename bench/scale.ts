import { writeRequestScript } from './lua.js';
import { runWrk } from './wrk.js';
import { rssAnonBytes, startService, type ServiceProcess } from './service-process.js';
import type { ServiceClient } from './client.js';
import type { SeededUser } from './scenarios.js';
import type { LoadSettings } from './measure.js';

export interface MemoryFigures {
  rssAnonAfterSeedBytes: number;
  /** Users read once each, in ID order, before RssAnon is read. */
  sweptReads: number;
  writes: number;
  rssAnonAfterSweepBytes: number;
  actorsResident: number | null;
}

export interface ColdStart {
  coldStartMs: number;
  rssAnonAtStartBytes: number;
}

/**
 * wrk runs by time: size the run from a measured rate, with headroom; the script stops sending after
 * one pass (plus one request per connection, for those in flight when it stops).
 */
const secondsFor = (count: number, ratePerSecond: number) => Math.ceil((count / Math.max(ratePerSecond, 1)) * 1.25) + 1;

export async function memoryAfterSweep(
  service: ServiceProcess,
  client: ServiceClient,
  users: readonly SeededUser[],
  rates: { read: number; write: number },
  writes: number,
  settings: LoadSettings,
): Promise<MemoryFigures> {
  const rssAnonAfterSeedBytes = await rssAnonBytes(service.pid);
  const dataPath = `/applications/${client.app.id}/users/{user}/data`;
  const sweep = await writeRequestScript(settings.dir, 'sweep-read', {
    method: 'GET',
    path: dataPath,
    headers: client.platformHeaders,
    pools: { user: users.map((u) => u.id) },
    pick: 'sequential',
    stopAfter: users.length + settings.connections,
  });
  const read = await runWrk({ ...settings, url: client.baseUrl, script: sweep, seconds: secondsFor(users.length, rates.read) });
  const written = users.slice(0, writes);
  const writeScript = await writeRequestScript(settings.dir, 'sweep-write', {
    method: 'PUT',
    path: dataPath,
    headers: { ...client.platformHeaders, 'content-type': 'application/json' },
    body: '{"data":{"email":"{email}","first_name":"Swept","last_name":"S{n}"}}',
    pools: { user: written.map((u) => u.id), email: written.map((u) => u.email) },
    pick: 'sequential',
    stopAfter: writes + settings.connections,
  });
  const write = await runWrk({ ...settings, url: client.baseUrl, script: writeScript, seconds: secondsFor(writes, rates.write) });
  return {
    rssAnonAfterSeedBytes,
    sweptReads: read.requests,
    writes: write.requests,
    rssAnonAfterSweepBytes: await rssAnonBytes(service.pid),
    actorsResident: await actorsResident(client),
  };
}

async function actorsResident(client: ServiceClient): Promise<number | null> {
  const text = String(await client.call('GET', '/metrics'));
  const match = /^actors_resident (\d+)/m.exec(text);
  return match ? Number(match[1]) : null;
}

/** Restarts the service on the seeded data dir: process start to the first 200 on /health. */
export async function coldStart(dataDir: string, env: Record<string, string>): Promise<ColdStart> {
  const service = await startService({ dataDir, env });
  try {
    return { coldStartMs: service.coldStartMs, rssAnonAtStartBytes: await rssAnonBytes(service.pid) };
  } finally {
    await service.stop();
  }
}
