import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { FORMAT_VERSION, formatBehind } from './storage/migrations.js';
import type { StopRequests } from './stop-requests.js';
import type { Config } from './config.js';
import { listenUnavailable, type UnavailableServer } from './http/unavailable-server.js';

/** The child's entry: opening the services moves the data dir to this build's format. */
const UPGRADE_ENTRY = fileURLToPath(new URL('./format-upgrade-main.js', import.meta.url));

/** What the port answers while an upgrade runs. */
const UPGRADING = {
  health: 'upgrading',
  message: "The data is being upgraded to this build's format; try again shortly",
  retryAfterSeconds: 5,
};

/**
 * Moves a data dir of an older format to this build's in a child process, before the server opens
 * it. Meanwhile the port answers 503 (`listenUnavailable`), so that "upgrading" is told from "down";
 * it is taken before the child starts (a port in use stops the start before anything migrates) and
 * answered, still open, for the server to close just before it listens; a stop closes it at once.
 * Undefined (and no port taken) when the data dir has this build's format.
 */
export async function upgradeFormatApart(
  config: Pick<Config, 'dataDir' | 'host' | 'port'>,
  logger: Logger,
  stops: StopRequests,
): Promise<UnavailableServer | undefined> {
  const from = await formatBehind(config.dataDir);
  if (from === undefined) return undefined;
  const listening = await listenUnavailable(config.host, config.port, UPGRADING);
  const ignoreStops = stops.onStop(() => listening.close());
  const window = {
    port: listening.port,
    close() {
      ignoreStops();
      listening.close();
    },
  };
  try {
    await upgradeInChild(config.dataDir, from, listening.port, logger, stops);
    return window;
  } catch (error) {
    window.close();
    throw error;
  }
}

/**
 * Runs the upgrade's child to its end. A step is one transaction over every user, and LMDB keeps the
 * memory that transaction's pages took (~0.6 GB for 200 000 users, ~0.9 GB for a million) until its
 * process ends: a server that migrated itself would carry it for as long as it runs. The child
 * inherits the server's output; a stop asked of the server meanwhile stops the child, whose
 * transaction is then never committed, and so does the server's end (`kill -9`), which leaves the
 * data dir unclaimed (format-upgrade-main.ts).
 */
async function upgradeInChild(dataDir: string, from: number, port: number, logger: Logger, stops: StopRequests): Promise<void> {
  const child = spawn(process.execPath, [...withoutDebuggerFlags(process.execArgv), UPGRADE_ENTRY, String(process.pid)], { stdio: 'inherit', env: process.env });
  const ignoreStops = stops.onStop((signal) => child.kill(signal));
  try {
    logger.info({ from, to: FORMAT_VERSION, child: child.pid, port }, 'upgrading the data format in a child process');
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
    });
    if (code !== 0) throw new Error(await upgradeFailure(dataDir, signal ? `signal ${signal}` : `exit ${code}`));
  } finally {
    ignoreStops();
  }
}

/**
 * Why the start stops, with the format the data dir is left in: each step commits on its own, so an
 * upgrade over several steps may end between two, or (stopped as it ends) after the last.
 */
export async function upgradeFailure(dataDir: string, how: string): Promise<string> {
  const left = await formatBehind(dataDir);
  return left === undefined
    ? `The data format upgrade of ${dataDir} ended (${how}) once done: it has this build's format (${FORMAT_VERSION})`
    : `The data format upgrade of ${dataDir} failed (${how}); it is left in format ${left}`;
}

/** The `--inspect…` flags that may take their value as the next argument (`--inspect-port 9229`). */
const DEBUGGER_FLAGS_WITH_VALUE = new Set(['--inspect-port', '--inspect-publish-uid']);

/** Node's flags less the debugger's: a second process cannot listen on the same inspector port. */
function withoutDebuggerFlags(flags: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < flags.length; i++) {
    if (!flags[i].startsWith('--inspect')) kept.push(flags[i]);
    else if (DEBUGGER_FLAGS_WITH_VALUE.has(flags[i])) i++;
  }
  return kept;
}
