import t from 'tap';
import { parseOptions } from '../../bench/options.js';
import { PROFILE_WRITE } from '../../bench/scenarios.js';
import { summarize, type ServiceRun } from '../../bench/summary.js';
import { measured } from '../helpers/measured.js';

const MB = 2 ** 20;

const run = (extra: Partial<ServiceRun> = {}): ServiceRun => ({
  users: 2000,
  firstStartMs: 301.4,
  seeding: { seconds: 0.62, usersPerSecond: 3225.8 },
  outcomes: [],
  memorySkipped: 'needs seeded users',
  coldStart: { coldStartMs: 245.2, rssAnonAtStartBytes: 28 * MB },
  ...extra,
});

t.test('the summary says how the run was made: flags, a restart, the service log, the load and the seeding', async (t) => {
  const plain = summarize(parseOptions(['--quick']), run()).split('\n');
  t.same(plain, [
    'load: wrk -t1 -c64, 1s warm-up, then 3 alternating rounds of ceiling and route, 3s each in total',
    'seeding: 2000 users in 0.6s = 3226 users/s (one PUT each, 128 in flight)',
    'memory: skipped (needs seeded users)',
    'start: 301 ms on an empty dir; cold start 245 ms on the seeded dir (RssAnon 28 MB)',
  ]);
  const probe = summarize(
    parseOptions(['--quick', '--node-flag=--trace-gc', '--restart-after-seeding', '--service-log', '/tmp/gc.log']),
    run({ serviceDied: 'signal SIGABRT', seeding: undefined, seedingSkipped: 'the service exited' }),
  ).split('\n');
  t.same(probe.slice(0, 4), [
    'THE SERVICE EXITED DURING THE RUN (signal SIGABRT)',
    'service node flags: --trace-gc',
    'routes measured in a service started anew after the seeding (--restart-after-seeding)',
    'service output appended to /tmp/gc.log',
  ]);
  t.ok(probe.includes('seeding: skipped (the service exited)'));
});

t.test('the summary gives memory after the sweep, warns of a short sweep, and sets the storage floor against the write', async (t) => {
  const write = { name: PROFILE_WRITE.name, status: 'measured' as const, result: measured(6000, 9, 30, 160), ceiling: measured(150000, 0.2, 1, 4.5) };
  const floor = { connections: 64, writes: 150000, seconds: 10, writesPerSecond: 15000, p50Ms: 4.2, p99Ms: 8.27, cpuMicrosPerWrite: 48.5, loopUtilization: 0.57 };
  const memory = { rssAnonAfterSeedBytes: 372 * MB, sweptReads: 1900, writes: 2000, rssAnonAfterSweepBytes: 414 * MB, actorsResident: 10000, actorsResidentBytes: 12 * MB };
  const lines = summarize(parseOptions([]), run({ outcomes: [write], storageFloor: floor, memory, memorySkipped: undefined })).split('\n');
  t.ok(lines.includes('memory: RssAnon 372 MB after seeding, 414 MB after 1900 sweep reads (2000 users) and 2000 writes; actors resident: 10000 (12 MB stored)'));
  t.ok(lines.includes('  warning: the sweep read only 1900 of 2000 users'));
  const floorLine = lines.find((line) => line.startsWith('storage floor:'));
  t.match(floorLine, /^storage floor: 15000 durable record rewrites\/s \(64 in flight, no HTTP, p50 4\.20 ms, p99 8\.3 ms, 49 µs CPU per write, loop 57% busy\)/);
  t.match(floorLine, /= 0\.10× the profile write's ceiling; the profile write reached 40% of it$/, 'its ratio to the write\'s ceiling, and the write\'s share of it');

  const failed = summarize(parseOptions([]), run({ outcomes: [write], storageFloorFailed: 'no view record for user u1' })).split('\n');
  t.ok(failed.includes('storage floor: FAILED (no view record for user u1)'));
  t.notOk(failed.some((line) => line.startsWith('storage floor: 1')), 'and no figures');
});
