import { writeRequestScript, type RequestShape } from './lua.js';
import { runWrk } from './wrk.js';
import { rssAnonBytes, startService, type ServiceProcess, type ServiceStart } from './service-process.js';
import type { ServiceClient } from './client.js';
import { userPools, type SeededUser } from './scenarios.js';
import { profileWriteBody } from './profile-fixture.js';
import type { LoadSettings } from './measure.js';

export interface MemoryFigures {
  rssAnonAfterSeedBytes: number;
  /** Users read once each, in ID order, before RssAnon is read. */
  sweptReads: number;
  writes: number;
  rssAnonAfterSweepBytes: number;
  actorsResident: number | null;
  /** Their stored bytes (`actors_resident_bytes`, capped by `SVC_MAX_ACTOR_BYTES`). */
  actorsResidentBytes: number | null;
}

export interface ColdStart {
  coldStartMs: number;
  rssAnonAtStartBytes: number;
}

/**
 * One pass over `users` in order with the request `shape` builds (its `{user}`, `{email}` and
 * `{phone}` pools come from the users). wrk runs by time: each run is sized from the measured rate
 * with headroom and its script stops after the users it was given; a run cut short by a busy
 * machine is followed by another over the users still left. Answers how many requests were answered.
 */
async function sweep(
  name: string,
  users: readonly SeededUser[],
  shape: (pools: Record<string, readonly string[]>) => RequestShape,
  ratePerSecond: number,
  url: string,
  settings: LoadSettings,
): Promise<number> {
  let done = 0;
  for (let attempt = 0; attempt < 5 && done < users.length; attempt++) {
    const left = users.slice(done);
    const script = await writeRequestScript(settings.dir, `${name}-${attempt}`, {
      ...shape(userPools(left)),
      pick: 'sequential',
      stopAfter: left.length + settings.connections,
    });
    const seconds = Math.ceil((left.length / Math.max(ratePerSecond, 1)) * 1.25) + 1;
    const result = await runWrk({ ...settings, url, script, seconds });
    done += Math.min(result.requests, left.length);
  }
  return done;
}

export async function memoryAfterSweep(
  service: ServiceProcess,
  client: ServiceClient,
  users: readonly SeededUser[],
  rates: { read: number; write: number },
  writes: number,
  settings: LoadSettings,
): Promise<MemoryFigures> {
  const rssAnonAfterSeedBytes = await rssAnonBytes(service.pid);
  const path = `/applications/${client.app.id}/users/{user}/data`;
  const sweptReads = await sweep(
    'sweep-read',
    users,
    (pools) => ({ method: 'GET', path, headers: client.platformHeaders, pools: { user: pools.user } }),
    rates.read,
    client.baseUrl,
    settings,
  );
  const written = await sweep(
    'sweep-write',
    users.slice(0, writes),
    (pools) => ({
      method: 'PUT',
      path,
      headers: { ...client.platformHeaders, 'content-type': 'application/json' },
      body: profileWriteBody({ first_name: 'Swept', last_name: 'S{n}' }),
      pools,
    }),
    rates.write,
    client.baseUrl,
    settings,
  );
  return {
    rssAnonAfterSeedBytes,
    sweptReads,
    writes: written,
    rssAnonAfterSweepBytes: await rssAnonBytes(service.pid),
    ...(await actorsResident(client)),
  };
}

async function actorsResident(client: ServiceClient): Promise<Pick<MemoryFigures, 'actorsResident' | 'actorsResidentBytes'>> {
  const text = String(await client.call('GET', '/metrics'));
  const gauge = (name: string) => {
    const match = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
    return match ? Number(match[1]) : null;
  };
  return { actorsResident: gauge('actors_resident'), actorsResidentBytes: gauge('actors_resident_bytes') };
}

/** Restarts the service on the seeded data dir: process start to the first 200 on /health. */
export async function coldStart(start: ServiceStart): Promise<ColdStart> {
  const service = await startService(start);
  try {
    return { coldStartMs: service.coldStartMs, rssAnonAtStartBytes: await rssAnonBytes(service.pid) };
  } finally {
    await service.stop();
  }
}
