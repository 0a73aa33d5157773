import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { compiledService } from './build.js';
import { ENDS_WITH_TEST } from './ends-with-test.js';
import type { TestApp } from './server.js';

interface Tap {
  teardown(fn: () => unknown): void;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ChildServer {
  url: string;
  port: number;
  child: ChildProcess;
  /** The credentials printed by a first start; undefined when the data dir was not empty. */
  defaultApp?: TestApp;
  /** Everything written to stdout and stderr so far. */
  stdout(): string;
  stderr(): string;
  /** The first JSON log line on stdout (already written or still to come) that `matches`. */
  waitForLog(matches: (entry: LogEntry) => boolean): Promise<LogEntry>;
  exited: Promise<Exit>;
}

export type LogEntry = Record<string, any>;

/** Environment for a child: the caller's, minus what would make it load tap's TypeScript hooks. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _ignored, ...inherited } = process.env;
  // A server on PORT 0 needs one; its links are redeemed by their path.
  return { ...inherited, SVC_PUBLIC_URL: 'http://svc.test', ...env };
}

/** The JSON log lines in `text` (a child's stdout), in order. */
export const logEntries = (text: string): LogEntry[] =>
  text.split('\n').flatMap((line) => (line.startsWith('{') && line.endsWith('}') ? [JSON.parse(line)] : []));

/**
 * `node ...args`, ending with this test process (`ENDS_WITH_TEST`), under `ulimit -f` when
 * `fileSizeLimitKiB` is given: a full disk, for this process alone.
 */
function nodeCommand(args: string[], fileSizeLimitKiB: number | undefined): [string, string[]] {
  const node = [...ENDS_WITH_TEST, ...args];
  if (fileSizeLimitKiB === undefined) return [process.execPath, node];
  // POSIX sh counts `ulimit -f` in blocks of 512 bytes.
  return ['/bin/sh', ['-c', `ulimit -f ${fileSizeLimitKiB * 2} && exec "$@"`, 'sh', process.execPath, ...node]];
}

const DEFAULT_APP_LINE = /^\s+app (id|key|secret):\s+(\S+)$/gm;

/**
 * Runs the real service (`src/main.ts`, compiled) as a child process on `dataDir` and an ephemeral
 * port; resolves once it logs `listening`. Killed with SIGKILL at teardown if still running.
 */
export async function startChildServer(
  t: Tap,
  options: {
    dataDir: string;
    env?: Record<string, string>;
    /** The largest file the child may write (`ulimit -f`): a full disk, for this process alone. */
    fileSizeLimitKiB?: number;
    /** Node's own flags, before the script. */
    nodeFlags?: string[];
  },
): Promise<ChildServer> {
  const main = join(await compiledService(), 'src', 'main.js');
  const child = spawn(...nodeCommand([...(options.nodeFlags ?? []), main], options.fileSizeLimitKiB), {
    env: childEnv({ HOST: '127.0.0.1', PORT: '0', SVC_LOG_LEVEL: 'info', ...options.env, SVC_DATA_DIR: options.dataDir }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<Exit>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const waitForLog = (matches: (entry: LogEntry) => boolean) =>
    new Promise<LogEntry>((resolve, reject) => {
      const check = () => {
        const found = logEntries(stdout).find(matches);
        if (!found) return;
        child.stdout!.off('data', check);
        resolve(found);
      };
      child.stdout!.on('data', check);
      check();
      exited.then((exit) => reject(new Error(`server exited (${JSON.stringify(exit)}) before the awaited log line:\n${stderr}`)));
    });
  const { port } = await waitForLog((entry) => entry.msg === 'listening');
  const printed = Object.fromEntries([...stdout.matchAll(DEFAULT_APP_LINE)].map((m) => [m[1], m[2]]));
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    child,
    defaultApp: printed.id ? { id: printed.id, key: printed.key, secret: printed.secret } : undefined,
    stdout: () => stdout,
    stderr: () => stderr,
    waitForLog,
    exited,
  };
}

export interface CliResult extends Exit {
  stdout: string;
  stderr: string;
}

/** Runs a compiled entry (`main` or `cli`) to its end; for runs expected to exit by themselves. */
export async function runEntry(
  entry: 'main' | 'cli',
  args: string[],
  options: { dataDir: string; env?: Record<string, string>; fileSizeLimitKiB?: number },
): Promise<CliResult> {
  const script = join(await compiledService(), 'src', `${entry}.js`);
  const child = spawn(...nodeCommand([script, ...args], options.fileSizeLimitKiB), {
    env: childEnv({ ...options.env, SVC_DATA_DIR: options.dataDir }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exit = await new Promise<Exit>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  return { ...exit, stdout, stderr };
}

/** Runs `npm run svc -- …args` (the compiled CLI) on `dataDir` as a child process. */
export const runCli = (args: string[], options: { dataDir: string; env?: Record<string, string>; fileSizeLimitKiB?: number }) =>
  runEntry('cli', args, options);
