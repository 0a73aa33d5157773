import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { compiledService } from './build.js';
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
  exited: Promise<Exit>;
}

/** Environment for a child: the caller's, minus what would make it load tap's TypeScript hooks. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _ignored, ...inherited } = process.env;
  return { ...inherited, ...env };
}

const DEFAULT_APP_LINE = /^\s+app (id|key|secret):\s+(\S+)$/gm;

/**
 * Runs the real service (`src/main.ts`, compiled) as a child process on `dataDir` and an ephemeral
 * port; resolves once it logs `listening`. Killed with SIGKILL at teardown if still running.
 */
export async function startChildServer(
  t: Tap,
  options: { dataDir: string; env?: Record<string, string> },
): Promise<ChildServer> {
  const build = await compiledService();
  const child = spawn(process.execPath, [join(build, 'src', 'main.js')], {
    env: childEnv({ HOST: '127.0.0.1', PORT: '0', SVC_LOG_LEVEL: 'info', ...options.env, SVC_DATA_DIR: options.dataDir }),
    stdio: ['ignore', 'pipe', 'pipe'],
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
  const port = await new Promise<number>((resolve, reject) => {
    const onData = () => {
      const listening = stdout
        .split('\n')
        .flatMap((line) => (line.startsWith('{') ? [JSON.parse(line)] : []))
        .find((entry) => entry.msg === 'listening');
      if (listening) {
        child.stdout!.off('data', onData);
        resolve(listening.port);
      }
    };
    child.stdout!.on('data', onData);
    exited.then((exit) => reject(new Error(`server exited (${JSON.stringify(exit)}) before listening:\n${stderr}`)));
  });
  const printed = Object.fromEntries([...stdout.matchAll(DEFAULT_APP_LINE)].map((m) => [m[1], m[2]]));
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    child,
    defaultApp: printed.id ? { id: printed.id, key: printed.key, secret: printed.secret } : undefined,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
  };
}

export interface CliResult extends Exit {
  stdout: string;
  stderr: string;
}

/** Runs `npm run svc -- …args` (the compiled CLI) on `dataDir` as a child process. */
export async function runCli(args: string[], options: { dataDir: string; env?: Record<string, string> }): Promise<CliResult> {
  const build = await compiledService();
  const child = spawn(process.execPath, [join(build, 'src', 'cli.js'), ...args], {
    env: childEnv({ ...options.env, SVC_DATA_DIR: options.dataDir }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exit = await new Promise<Exit>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  return { ...exit, stdout, stderr };
}
