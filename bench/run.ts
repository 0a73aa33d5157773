import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseOptions, type BenchOptions } from './options.js';
import { runMain } from './main.js';
import { summarize, type ServiceRun } from './summary.js';
import { WRK_INSTALL_HINT, wrkAvailable } from './wrk.js';
import { startCeiling } from './ceiling.js';
import { startService } from './service-process.js';
import { RouteUnavailable, serviceClient } from './client.js';
import { seedUsers, signIn, type Seeding } from './seed.js';
import { chooseScenarios, PROFILE_WRITE, type Scenario, type ScenarioEnv, type SignedInUser } from './scenarios.js';
import { measurePaired, untrusted, prepareScripts, type LoadSettings, type Target } from './measure.js';
import { coldStart, memoryAfterSweep, type MemoryFigures } from './scale.js';
import { formatTable, judge, resultsPath, writeResults, type ScenarioOutcome } from './report.js';
import { formatHotFunctions, hottestFunctions } from './cpu-profile.js';
import { measureStorageFloor, type StorageFloor } from './storage-floor.js';

const log = (message: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const chosen = chooseScenarios(options.only);
  if (!wrkAvailable()) {
    process.stderr.write(`${WRK_INSTALL_HINT}\n`);
    return 2;
  }
  const startedAt = new Date();
  const work = await mkdtemp(join(tmpdir(), 'svc-bench-'));
  const settings: LoadSettings = { ...options, dir: join(work, 'wrk') };
  await mkdir(settings.dir);
  const ceiling = await startCeiling();
  try {
    const profileDir = resultsPath(startedAt, '-cpu-prof');
    const run = await measureService(options, chosen, settings, ceiling, join(work, 'data'), profileDir);
    process.stdout.write(`\n${formatTable(run.outcomes)}\n\n${summarize(options, run)}\n`);
    if (run.hot) {
      process.stdout.write(`\nHottest functions of the service (share of busy self time):\n${formatHotFunctions(run.hot)}\n`);
      process.stdout.write(`profiles (open in Chrome DevTools): ${profileDir}\n`);
    }
    const file = await writeResults(
      {
        startedAt: startedAt.toISOString(),
        machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version, loadavgAtEnd: loadavg() },
        options,
        ...run,
      },
      startedAt,
    );
    process.stdout.write(`\nresults: ${file}\n`);
    return run.serviceDied || run.storageFloorFailed || run.outcomes.some((o) => o.status === 'failed') ? 1 : 0;
  } finally {
    await ceiling.stop();
    await rm(work, { recursive: true, force: true });
  }
}

async function measureService(
  options: BenchOptions,
  chosen: readonly Scenario[],
  settings: LoadSettings,
  ceilingServer: Target,
  dataDir: string,
  profileDir: string,
): Promise<ServiceRun> {
  const start = { dataDir, env: options.env, nodeFlags: options.nodeFlags, logFile: options.serviceLog };
  let service = await startService(start);
  const firstStartMs = service.coldStartMs;
  let stopped = false;
  try {
    const credentials = service.credentials;
    if (!credentials) throw new Error('the service printed no default application credentials on first start');
    let client = serviceClient(service.baseUrl, credentials, options.env.SVC_BRAND);

    log(`seeding ${options.users} users over HTTP (${options.seedConcurrency} in flight)`);
    let seeding: Seeding | undefined;
    let seedingError: unknown;
    try {
      seeding = await seedUsers(client, options.users, options.seedConcurrency, (done) => log(`  ${done} users`));
      log(`  ${seeding.usersPerSecond.toFixed(0)} users/s`);
    } catch (error) {
      seedingError = error;
      log(`  seeding stopped: ${(error as Error).message}`);
    }
    if (options.cpuProf || options.restartAfterSeeding) {
      log(
        options.cpuProf
          ? 'restarting the service under node --cpu-prof, so the profile holds the routes, not the seeding'
          : 'restarting the service, so the routes run in a process that did not seed',
      );
      await service.stop();
      const profiling = options.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
      service = await startService({ ...start, nodeFlags: [...options.nodeFlags, ...profiling] });
      client = serviceClient(service.baseUrl, credentials, options.env.SVC_BRAND);
    }
    let signedIn: Promise<SignedInUser[]> | undefined;
    const env: ScenarioEnv = {
      client,
      users() {
        if (!seeding) throw seedingError;
        return seeding.users;
      },
      signedIn: () => (signedIn ??= signIn(client, env.users().slice(0, options.signedInUsers))),
    };

    const outcomes: ScenarioOutcome[] = [];
    let storageFloor: StorageFloor | undefined;
    let storageFloorFailed: string | undefined;
    for (const scenario of chosen) {
      const base = { name: scenario.name, bar: scenario.bar, requestsPerOperation: scenario.requestsPerOperation, connections: scenario.connections };
      const death = service.died();
      if (death) {
        outcomes.push({ ...base, status: 'failed', reason: `the service had exited (${death}) before this scenario` });
        continue;
      }
      try {
        const load = await scenario.setup(env, settings.dir);
        const scripts = await prepareScripts(client, scenario.name, load, settings.dir);
        const connections = scenario.connections ?? settings.connections;
        log(`${scenario.name}: ${options.rounds} rounds of ceiling then route, ${options.seconds}s measured each, ${connections} connections`);
        const route = { url: client.baseUrl, pid: service.pid };
        const paired = await measurePaired(ceilingServer, route, scripts, { ...settings, connections });
        const { route: result, ceiling, rounds } = paired;
        const ratio = result.requestsPerSecond / ceiling.requestsPerSecond;
        const measured = { ...base, result, ceiling, rounds, ratio, barMet: judge(result, ratio, scenario.bar) };
        const reason = untrusted(paired);
        outcomes.push(reason ? { ...measured, status: 'failed', reason } : { ...measured, status: 'measured' });
      } catch (error) {
        const skipped = error instanceof RouteUnavailable;
        const died = service.died();
        const reason = died ? `the service exited (${died}) during this scenario` : (error as Error).message;
        log(`${scenario.name}: ${skipped ? 'skipped' : 'FAILED'}: ${reason}`);
        outcomes.push({ ...base, status: skipped ? 'skipped' : 'failed', reason });
      }
      // On the data set the write just measured, before the group scenarios grow the signed-in users' records.
      if (scenario === PROFILE_WRITE && seeding && outcomes.at(-1)?.result) {
        const connections = scenario.connections ?? settings.connections;
        log(`storage floor: durable rewrites of random users' records, ${connections} in flight, no HTTP (the service idle)`);
        const userIds = seeding.users.map((u) => u.id);
        storageFloor = await measureStorageFloor(dataDir, client.app.id, userIds, { ...settings, connections }).catch((error) => {
          storageFloorFailed = (error as Error).message;
          log(`storage floor: FAILED: ${storageFloorFailed}`);
          return undefined;
        });
      }
    }

    const rate = (name: string) => outcomes.find((o) => o.name.startsWith(name) && o.status === 'measured')?.result?.requestsPerSecond;
    const readRate = rate('platform profile read');
    const writeRate = rate(PROFILE_WRITE.name);
    let memory: MemoryFigures | undefined;
    let memorySkipped: string | undefined;
    if (seeding && readRate && writeRate) {
      log(`memory: read sweep over ${options.users} users, then ${options.sweepWrites} writes`);
      memory = await memoryAfterSweep(service, client, seeding.users, { read: readRate, write: writeRate }, options.sweepWrites, settings);
    } else memorySkipped = 'needs seeded users and measured platform profile read and profile write';

    const serviceDied = service.died();
    await service.stop();
    stopped = true;
    const hot = options.cpuProf ? await hottestFunctions(profileDir) : undefined;
    log('cold start on the seeded data dir');
    const restart = await coldStart(start);
    const { users: _users, ...seedingFigures } = seeding ?? { users: [] };
    return {
      users: seeding?.users.length ?? 0,
      firstStartMs,
      seeding: seeding ? (seedingFigures as Omit<Seeding, 'users'>) : undefined,
      seedingSkipped: seeding ? undefined : String((seedingError as Error)?.message),
      outcomes,
      memory,
      memorySkipped,
      coldStart: restart,
      storageFloor,
      storageFloorFailed,
      serviceDied,
      hot,
    };
  } finally {
    if (!stopped) await service.stop();
  }
}

void runMain(main);
