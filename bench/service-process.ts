import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { get } from 'node:http';
import { readFile } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface AppCredentials {
  id: string;
  key: string;
  secret: string;
}

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly baseUrl: string;
  /** Printed by the service on first start of an empty data dir only. */
  readonly credentials?: AppCredentials;
  /** Process start to the first 200 on /health. */
  readonly coldStartMs: number;
  /** How the process ended, if it has ended without being stopped (`code 1`, `signal SIGABRT`). */
  died(): string | undefined;
  stop(): Promise<void>;
}

export interface ServiceStart {
  dataDir: string;
  env?: Record<string, string>;
  /** Extra node flags, e.g. `--cpu-prof`. */
  nodeFlags?: string[];
  /** A file the service's standard output is appended to. */
  logFile?: string;
}

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Starts the production build as a child process and waits until /health answers 200. */
export async function startService(options: ServiceStart): Promise<ServiceProcess> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const startedAt = performance.now();
  const child = spawn(process.execPath, [...(options.nodeFlags ?? []), MAIN], {
    env: {
      ...process.env,
      // info: the service logs nothing per request at info, and its `listening` line says the first
      // start's credentials are printed.
      SVC_LOG_LEVEL: 'info',
      ...options.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      SVC_PUBLIC_URL: baseUrl,
      SVC_DATA_DIR: options.dataDir,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  if (options.logFile) {
    const log = createWriteStream(options.logFile, { flags: 'a' });
    child.stdout!.on('data', (chunk) => log.write(withoutSecrets(String(chunk))));
    child.on('exit', () => log.end());
  }
  let stopping = false;
  let death: string | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code, signal) => {
      if (!stopping) death = signal ? `signal ${signal}` : `code ${code}`;
      resolve(code);
    }),
  );
  let gone = false;
  void exited.then(() => (gone = true));

  while (!(await healthy(baseUrl))) {
    if (gone) throw new Error(`the service exited before answering /health:\n${stdout}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  const coldStartMs = performance.now() - startedAt;
  // A first start prints the default credentials once it listens, just before its `listening` line.
  while (!stdout.includes('"msg":"listening"')) {
    if (gone) throw new Error(`the service exited before it logged listening:\n${stdout}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return {
    child,
    pid: child.pid!,
    baseUrl,
    credentials: readCredentials(stdout),
    coldStartMs,
    died: () => death,
    async stop() {
      stopping = true;
      if (!gone) child.kill('SIGTERM');
      const code = await exited;
      if (death) return; // reported through died()
      if (code !== 0 && code !== null) throw new Error(`the service exited with ${code}`);
    },
  };
}

/** `text` with the secret a first start prints masked: a log file must not keep it. */
export const withoutSecrets = (text: string) => text.replace(/(app secret:\s+)\S+/g, '$1[not logged]');

function healthy(baseUrl: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = get(`${baseUrl}/health`, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
    });
    req.on('error', () => resolve(false));
  });
}

function readCredentials(stdout: string): AppCredentials | undefined {
  const field = (label: string) => new RegExp(`${label}:\\s+(\\S+)`).exec(stdout)?.[1];
  const id = field('app id');
  const key = field('app key');
  const secret = field('app secret');
  return id && key && secret ? { id, key, secret } : undefined;
}

/** Anonymous resident memory (heap, stacks; not the mapped LMDB file) in bytes, from /proc. */
export async function rssAnonBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /^RssAnon:\s+(\d+) kB/m.exec(status);
  if (!match) throw new Error(`no RssAnon in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/** CPU seconds (user + system, every thread) a process has used so far, from /proc/<pid>/stat. */
export const cpuSeconds = async (pid: number) => cpuOf(await statFields(`/proc/${pid}/stat`));

/** CPU seconds of the process's main thread alone (the event loop): when it nears 1 s per second, the loop is the limit. */
export const loopCpuSeconds = async (pid: number) => cpuOf(await statFields(`/proc/${pid}/task/${pid}/stat`));

/** Major page faults of the process so far (pages read from disk, such as parts of the LMDB map). */
export const majorFaults = async (pid: number) => Number((await statFields(`/proc/${pid}/stat`))[9]);

/** The fields of a /proc stat line from field 3 on (after the command name, which may hold spaces). */
async function statFields(path: string): Promise<string[]> {
  const stat = await readFile(path, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

// utime and stime are fields 14 and 15 of the line (12 and 13 from field 3). Linux counts in 1/100 s.
const cpuOf = (fields: string[]) => (Number(fields[11]) + Number(fields[12])) / 100;
