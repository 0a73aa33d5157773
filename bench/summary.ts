import type { BenchOptions } from './options.js';
import type { Seeding } from './seed.js';
import { PROFILE_WRITE } from './scenarios.js';
import type { ColdStart, MemoryFigures } from './scale.js';
import type { ScenarioOutcome } from './report.js';
import type { HotFunction } from './cpu-profile.js';
import type { StorageFloor } from './storage-floor.js';

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;

/** What a run measured of the service, as the bench prints and stores it. */
export interface ServiceRun {
  users: number;
  firstStartMs: number;
  seeding?: Omit<Seeding, 'users'>;
  seedingSkipped?: string;
  outcomes: ScenarioOutcome[];
  memory?: MemoryFigures;
  memorySkipped?: string;
  coldStart: ColdStart;
  /** Measured when the profile write was: its reference on the storage side. */
  storageFloor?: StorageFloor;
  storageFloorFailed?: string;
  /** Set when the service under test exited on its own during the run. */
  serviceDied?: string;
  hot?: HotFunction[];
}

/** The lines under the table: how the run was made, and the figures that are not a route's. */
export function summarize(options: BenchOptions, run: ServiceRun): string {
  const lines = [
    ...(run.serviceDied ? [`THE SERVICE EXITED DURING THE RUN (${run.serviceDied})`] : []),
    ...(options.nodeFlags.length > 0 ? [`service node flags: ${options.nodeFlags.join(' ')}`] : []),
    ...(options.restartAfterSeeding ? ['routes measured in a service started anew after the seeding (--restart-after-seeding)'] : []),
    ...(options.serviceLog ? [`service output appended to ${options.serviceLog}`] : []),
    `load: wrk -t${options.threads} -c${options.connections}, ${options.warmupSeconds}s warm-up, then ${options.rounds} alternating rounds of ceiling and route, ${options.seconds}s each in total`,
    run.seeding
      ? `seeding: ${run.users} users in ${run.seeding.seconds.toFixed(1)}s = ${run.seeding.usersPerSecond.toFixed(0)} users/s (one PUT each, ${options.seedConcurrency} in flight)`
      : `seeding: skipped (${run.seedingSkipped})`,
  ];
  if (run.memory) {
    const m = run.memory;
    lines.push(
      `memory: RssAnon ${mb(m.rssAnonAfterSeedBytes)} after seeding, ${mb(m.rssAnonAfterSweepBytes)} after ${m.sweptReads} sweep reads (${run.users} users) and ${m.writes} writes; actors resident: ${m.actorsResident ?? 'n/a'} (${m.actorsResidentBytes === null ? 'n/a' : mb(m.actorsResidentBytes)} stored)`,
    );
    if (m.sweptReads < run.users) lines.push(`  warning: the sweep read only ${m.sweptReads} of ${run.users} users`);
  } else lines.push(`memory: skipped (${run.memorySkipped})`);
  const floor = run.storageFloor;
  const write = run.outcomes.find((o) => o.name === PROFILE_WRITE.name && o.result);
  if (run.storageFloorFailed) lines.push(`storage floor: FAILED (${run.storageFloorFailed})`);
  if (floor && write?.result && write.ceiling) {
    lines.push(
      `storage floor: ${floor.writesPerSecond.toFixed(0)} durable record rewrites/s (${floor.connections} in flight, no HTTP, p50 ${floor.p50Ms.toFixed(2)} ms, p99 ${floor.p99Ms.toFixed(1)} ms, ${floor.cpuMicrosPerWrite.toFixed(0)} µs CPU per write, loop ${(floor.loopUtilization * 100).toFixed(0)}% busy) = ${(floor.writesPerSecond / write.ceiling.requestsPerSecond).toFixed(2)}× the profile write's ceiling; the profile write reached ${((write.result.requestsPerSecond / floor.writesPerSecond) * 100).toFixed(0)}% of it`,
    );
  }
  lines.push(
    `start: ${run.firstStartMs.toFixed(0)} ms on an empty dir; cold start ${run.coldStart.coldStartMs.toFixed(0)} ms on the seeded dir (RssAnon ${mb(run.coldStart.rssAnonAtStartBytes)})`,
  );
  return lines.join('\n');
}
