import { mkdirSync } from 'node:fs';
import pino, { type Logger } from 'pino';
import { loadConfig, ConfigError, type Config } from './config.js';
import { openServices, closeServices } from './services.js';
import type { Deps } from './deps.js';
import { createApp } from './app.js';
import { ensureDefaultApplication } from './features/applications/bootstrap.js';
import { isUnobservedCommitFailure, OWNER_ONLY_DIR } from './storage/store.js';
import { claimDataDir } from './storage/server-claim.js';
import { failureText } from './lib/failure.js';
import { upgradeFormatApart } from './format-upgrade.js';
import { createLogger } from './lib/logger.js';
import { StopRequests } from './stop-requests.js';

/**
 * Opens the data dir (moved to this build's format first, apart, while the port answers 503), listens,
 * and makes the default application on a first start. A step that fails closes what the earlier ones
 * opened.
 */
async function start(config: Config, logger: Logger, stops: StopRequests) {
  const upgraded = await upgradeFormatApart(config, logger, stops);
  const deps = await openServices(config, { logger }).catch((error: unknown) => {
    upgraded?.close();
    throw error;
  });
  const server = createApp(deps);
  try {
    // The port answering 503 while the format upgraded is handed over only now: a gap of a few
    // milliseconds, not the time it takes to open the data dir.
    upgraded?.close();
    const port = await server.listen(config.host, config.port);
    // Only once listening: a start that fails on its port must not use up the one showing of the secret.
    const created = await ensureDefaultApplication(deps.apps);
    return { deps, server, port, created };
  } catch (error) {
    await server.close();
    await closeDataDir(deps);
    throw error;
  }
}

/**
 * After a failed commit (a full disk) lmdb-js never settles closing the data dir, and the process
 * would end on its own, its claim left behind: then it is not waited for. Every answered write is on
 * disk already. Raced with lmdb-js's note of the failure, which a start that failed on it hears only
 * after it has begun closing.
 */
async function closeDataDir(deps: Deps): Promise<void> {
  const closed = await Promise.race([closeServices(deps).then(() => true), commitFailure.then(() => false)]);
  if (!closed) deps.logger.warn('not waiting for the data dir to close: a commit failed (is the disk full?)');
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger(config.logLevel);
  // Heard from here on: a stop asked while the start opens the data dir stops the server once it listens.
  const stops = new StopRequests((signal) => forceStop(signal, config.logLevel));
  mkdirSync(config.dataDir, { recursive: true, mode: OWNER_ONLY_DIR });
  const release = claimDataDir(config.dataDir);
  const { deps, server, port, created } = await start(config, logger, stops).catch((error: unknown) => {
    // A start that failed leaves no claim behind: the next one must not find the dir "served".
    release();
    throw error;
  });
  if (created) {
    // Printed once, in plain lines beside the JSON logs on standard output; never stored in clear (API.md: a collector keeping standard output keeps it too, and what to do then).
    process.stdout.write(
      [
        'Created the default application. Keep its secret now: it is not shown again.',
        `  app id:     ${created.app.id}`,
        `  app key:    ${created.credential.key}`,
        `  app secret: ${created.credential.secret}`,
        '',
      ].join('\n'),
    );
  }
  deps.logger.info({ host: config.host, port, dataDir: config.dataDir }, 'listening');

  const stop = async (signal: string) => {
    deps.logger.info({ signal }, 'shutting down');
    const unanswered = await server.drain(config.shutdownGraceMs);
    if (unanswered > 0) deps.logger.warn({ unanswered }, 'shutdown grace period over: closing connections with requests in flight');
    // The requests the grace cut off end their turns first: LMDB closed under one crashes the process.
    await server.close();
    await closeDataDir(deps);
    release();
    process.exit(0);
  };
  stops.onStop((signal) => void stop(signal));
}

/**
 * A stop asked again ends the process at once, as `kill -9` does, saying so first: the requests in
 * flight are cut unanswered, and every answered write is on disk already (an answer follows its
 * commit). Not `process.exit`: it waits for lmdb-js's writer thread, which, in a commit, waits for this
 * main thread, and the process would hang.
 */
function forceStop(signal: NodeJS.Signals, logLevel: string): void {
  try {
    // Written at once: the service's logger writes asynchronously, and its lines still under way are lost.
    createLogger(logLevel, pino.destination({ dest: 1, sync: true })).warn({ signal }, 'stop asked again: exiting at once, cutting the requests in flight');
  } finally {
    process.kill(process.pid, 'SIGKILL');
  }
}

let commitFailed!: () => void;
/** Settles once a commit has failed since the start (its write answered 503). */
const commitFailure = new Promise<void>((resolve) => (commitFailed = resolve));

process.on('unhandledRejection', (reason) => {
  if (isUnobservedCommitFailure(reason)) return commitFailed();
  // Anything else ends the process, as it would without this listener.
  throw reason;
});

main().catch((error) => {
  process.stderr.write(`${error instanceof ConfigError ? error.message : failureText(error, 'Cannot start: ', process.env)}\n`);
  process.exit(1);
});
