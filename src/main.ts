import { mkdirSync } from 'node:fs';
import { loadConfig, ConfigError, type Config } from './config.js';
import { openServices, closeServices } from './services.js';
import { createApp } from './app.js';
import { ensureDefaultApplication } from './features/applications/bootstrap.js';
import { isUnobservedCommitFailure, OWNER_ONLY_DIR } from './storage/store.js';
import { claimDataDir } from './storage/server-claim.js';
import { failureText } from './lib/failure.js';
import { upgradeFormatApart } from './format-upgrade.js';
import { createLogger } from './lib/logger.js';
import { StopRequests } from './stop-requests.js';

/** Opens the data dir (moved to this build's format first, apart) and listens. */
async function start(config: Config, stops: StopRequests) {
  await upgradeFormatApart(config.dataDir, createLogger(config.logLevel), stops);
  const deps = await openServices(config);
  const server = createApp(deps);
  const port = await server.listen(config.host, config.port);
  return { deps, server, port };
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  // Heard from here on: a stop asked while the start opens the data dir stops the server once it listens.
  const stops = new StopRequests();
  mkdirSync(config.dataDir, { recursive: true, mode: OWNER_ONLY_DIR });
  const release = claimDataDir(config.dataDir);
  const { deps, server, port } = await start(config, stops).catch((error: unknown) => {
    // A start that failed leaves no claim behind: the next one must not find the dir "served".
    release();
    throw error;
  });
  // Only once listening: a start that fails on its port must not use up the one showing of the secret.
  const created = await ensureDefaultApplication(deps.apps);
  if (created) {
    // Printed once, to the terminal only: the secret is never logged or stored in clear.
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

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    deps.logger.info({ signal }, 'shutting down');
    const unanswered = await server.drain(config.shutdownGraceMs);
    if (unanswered > 0) deps.logger.warn({ unanswered }, 'shutdown grace period over: closing connections with requests in flight');
    server.close();
    const closing = closeServices(deps);
    // After a failed commit (a full disk) lmdb-js never settles closing the data dir, and the process
    // would end on its own, its claim left behind. Every answered write is on disk already.
    if (!commitFailed) await closing;
    else deps.logger.warn('stopping without waiting for the data dir to close: a commit failed (is the disk full?)');
    release();
    process.exit(0);
  };
  stops.onStop((signal) => void stop(signal));
}

/** Whether a commit failed since the start (its write answered 503). */
let commitFailed = false;

process.on('unhandledRejection', (reason) => {
  if (isUnobservedCommitFailure(reason)) {
    commitFailed = true;
    return;
  }
  // Anything else ends the process, as it would without this listener.
  throw reason;
});

main().catch((error) => {
  process.stderr.write(`${error instanceof ConfigError ? error.message : failureText(error, 'Cannot start: ', process.env)}\n`);
  process.exit(1);
});
