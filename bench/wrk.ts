import { spawn, spawnSync } from 'node:child_process';

/** What one wrk run measured. Latencies in milliseconds. */
export interface WrkResult {
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  p50Ms: number;
  p75Ms: number;
  p90Ms: number;
  p99Ms: number;
  /** Responses with a status outside 2xx/3xx. */
  non2xx: number;
  socketErrors: { connect: number; read: number; write: number; timeout: number };
}

export interface WrkRun {
  url: string;
  seconds: number;
  connections: number;
  threads: number;
  script?: string;
  /** Per-request timeout handed to wrk. */
  timeoutSeconds?: number;
}

export const WRK_INSTALL_HINT = 'wrk is not installed. On Debian/Ubuntu: apt-get update && apt-get install -y wrk';

export function wrkAvailable(): boolean {
  const probe = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  return probe.error === undefined;
}

export function runWrk(run: WrkRun): Promise<WrkResult> {
  const args = [
    `-t${run.threads}`,
    `-c${run.connections}`,
    `-d${run.seconds}s`,
    `--timeout`,
    `${run.timeoutSeconds ?? 5}s`,
    '--latency',
    ...(run.script ? ['-s', run.script] : []),
    run.url,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      // wrk reports Lua errors on stderr and carries on without the failing thread's requests.
      if (code !== 0 || err.trim()) return reject(new Error(`wrk exited with ${code}: ${err || out}`));
      try {
        resolve(parseWrkOutput(out));
      } catch (error) {
        reject(new Error(`${(error as Error).message}\n--- wrk output ---\n${out}${err}`));
      }
    });
  });
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

function durationMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m|h)$/.exec(text);
  if (!match) throw new Error(`unreadable wrk duration "${text}"`);
  return Number(match[1]) * UNIT_MS[match[2]];
}

/** Reads the text `wrk --latency` prints (wrk 4.x). */
export function parseWrkOutput(text: string): WrkResult {
  const need = (regexp: RegExp, what: string) => {
    const match = regexp.exec(text);
    if (!match) throw new Error(`wrk output has no ${what}`);
    return match;
  };
  const percentile = (p: number) => durationMs(need(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm'), `${p}% latency`)[1]);
  const total = need(/^\s+(\d+) requests in ([\d.]+\w+),/m, 'request total');
  const rate = need(/^Requests\/sec:\s+([\d.]+)/m, 'Requests/sec');
  const non2xx = /^\s+Non-2xx or 3xx responses: (\d+)/m.exec(text);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  return {
    requests: Number(total[1]),
    seconds: durationMs(total[2]) / 1000,
    requestsPerSecond: Number(rate[1]),
    p50Ms: percentile(50),
    p75Ms: percentile(75),
    p90Ms: percentile(90),
    p99Ms: percentile(99),
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    socketErrors: {
      connect: Number(socket?.[1] ?? 0),
      read: Number(socket?.[2] ?? 0),
      write: Number(socket?.[3] ?? 0),
      timeout: Number(socket?.[4] ?? 0),
    },
  };
}
