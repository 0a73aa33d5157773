import { parseArgs, type ParseArgsConfig } from 'node:util';

export interface BenchOptions {
  quick: boolean;
  users: number;
  seconds: number;
  /** Alternating ceiling/route rounds the seconds are split into. */
  rounds: number;
  warmupSeconds: number;
  connections: number;
  threads: number;
  seedConcurrency: number;
  signedInUsers: number;
  /** Profile writes after the read sweep, before RssAnon is read. */
  sweepWrites: number;
  /** Scenario name fragments to run (all when empty). */
  only: string[];
  cpuProf: boolean;
  /** Measure the routes in a service started anew on the seeded data dir, not the one that seeded it (as `--cpu-prof` does). */
  restartAfterSeeding: boolean;
  /** Extra environment for the service (`--env NAME=VALUE`). */
  env: Record<string, string>;
  /** Node flags for every start of the service (`--node-flag=--single-threaded-gc`), for probes. */
  nodeFlags: string[];
  /** A file every start of the service appends its standard output to (`--node-flag=--trace-gc` writes there), for probes. */
  serviceLog: string | undefined;
}

const USAGE = `usage: npm run bench -- [--quick] [--users N] [--seconds S] [--rounds R] [--warmup S] [--connections C]
       [--threads T] [--seed-concurrency K] [--only NAME[,NAME]] [--cpu-prof] [--env NAME=VALUE ...]
       [--node-flag=FLAG ...] [--restart-after-seeding] [--service-log FILE]`;

/** The bench measures the service's own throughput, so rate limits are off unless `--env` sets them. */
export const UNLIMITED = { SVC_RATE_LIMIT_APP: '0', SVC_RATE_LIMIT_USER_WRITES: '0', SVC_RATE_LIMIT_HUB_IP: '0' };

/** A command line the bench (or another of its commands, with its own `usage`) cannot take. */
export class UsageError extends Error {
  constructor(problem: string, usage = USAGE) {
    super(`${problem}\n${usage}`);
  }
}

/** The values of a command line with these `options`, or a UsageError with `usage` for one it cannot take. */
export function parseCommandLine<const T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T, usage = USAGE) {
  try {
    return parseArgs({ args, options }).values;
  } catch (error) {
    throw new UsageError((error as Error).message, usage);
  }
}

/** The number `--name` was given, at least `min` and whole unless `fraction`; a UsageError with `usage` otherwise. */
export function numberOption(name: string, text: string, min: number, { fraction = false, usage = USAGE } = {}): number {
  if (!(fraction ? /^\d+(\.\d+)?$/ : /^\d+$/).test(text) || Number(text) < min) {
    throw new UsageError(`--${name} must be a ${fraction ? 'number' : 'whole number'} ≥ ${min}`, usage);
  }
  return Number(text);
}

const whole = (name: string, text: string | undefined, fallback: number, min = 1): number =>
  text === undefined ? fallback : numberOption(name, text, min);

export function parseOptions(argv: string[]): BenchOptions {
  const parsed = parseCommandLine(argv, {
    quick: { type: 'boolean', default: false },
    users: { type: 'string' },
    seconds: { type: 'string' },
    rounds: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    threads: { type: 'string' },
    'seed-concurrency': { type: 'string' },
    only: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    'restart-after-seeding': { type: 'boolean', default: false },
    env: { type: 'string', multiple: true },
    'node-flag': { type: 'string', multiple: true },
    'service-log': { type: 'string' },
    help: { type: 'boolean', default: false },
  });
  if (parsed.help) throw new UsageError('npm run bench: the bench suite (docs/PERFORMANCE.md)');
  const quick = parsed.quick!;
  const users = whole('users', parsed.users, quick ? 2_000 : 20_000);
  const env: Record<string, string> = { ...UNLIMITED };
  for (const pair of parsed.env ?? []) {
    const at = pair.indexOf('=');
    if (at < 1) throw new UsageError(`--env takes NAME=VALUE, not "${pair}"`);
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  const connections = whole('connections', parsed.connections, 64);
  const threads = whole('threads', parsed.threads, 1);
  if (threads > connections) throw new UsageError(`--threads (${threads}) must be at most --connections (${connections}): wrk refuses more`);
  return {
    quick,
    users,
    seconds: whole('seconds', parsed.seconds, quick ? 3 : 10),
    rounds: whole('rounds', parsed.rounds, quick ? 3 : 5),
    warmupSeconds: whole('warmup', parsed.warmup, quick ? 1 : 3, 0),
    connections,
    threads,
    seedConcurrency: whole('seed-concurrency', parsed['seed-concurrency'], 128),
    signedInUsers: Math.min(users, 256),
    sweepWrites: Math.min(users, 100_000),
    only: (parsed.only ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean),
    cpuProf: parsed['cpu-prof']!,
    restartAfterSeeding: parsed['restart-after-seeding']!,
    env,
    nodeFlags: nodeFlagsOf(parsed['node-flag'] ?? []),
    serviceLog: parsed['service-log'],
  };
}

function nodeFlagsOf(flags: string[]): string[] {
  const notFlag = flags.find((flag) => !flag.startsWith('--'));
  if (notFlag !== undefined) throw new UsageError(`--node-flag takes a node flag (--node-flag=--name), not "${notFlag}"`);
  return flags;
}
