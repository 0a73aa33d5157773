import type { Config } from '../config.js';
import type { Deps } from '../deps.js';
import { openServices, closeServices } from '../services.js';
import { createLogger } from '../lib/logger.js';
import pino from 'pino';
import { mkdirSync } from 'node:fs';
import { FORMAT_VERSION, formatBehind } from '../storage/migrations.js';
import { DataDirInUse, markWriter, servingProcess } from '../storage/server-claim.js';
import { holdsData, OWNER_ONLY_DIR } from '../storage/store.js';
import { CommandError } from './command.js';

/**
 * Opens the data dir next to a running server (LMDB is multi-process), runs `work`, closes it.
 * Logs go to stderr so stdout holds only the command's result. Only `create` makes a data dir where
 * there is none: any other command on a mistyped `SVC_DATA_DIR` would answer from an empty one.
 * `readOnly`: see `ServiceOptions`.
 */
export async function withServices<T>(
  config: Config,
  work: (deps: Deps) => Promise<T> | T,
  options: { create?: boolean; readOnly?: boolean } = {},
): Promise<T> {
  if (!options.create && !holdsData(config.dataDir)) {
    throw new CommandError(`${config.dataDir} holds no data (check SVC_DATA_DIR)`);
  }
  const releaseMark = markWriting(config.dataDir);
  try {
    if (!options.readOnly) await refuseMovingServedFormat(config.dataDir);
    const logger = createLogger(config.logLevel, pino.destination(2));
    const deps = await openServices(config, { logger, readOnly: options.readOnly });
    try {
      return await work(deps);
    } finally {
      await closeServices(deps);
    }
  } finally {
    releaseMark();
  }
}

/**
 * Every command but `verify` may write (opening the services migrates, makes the pepper and a signing
 * key): a restore under it would replace the data file it writes to, so it is refused while one runs.
 * So is `verify`: it makes LMDB's lock file where there is none, and one made after the restore
 * removed the old one would be the restored data file's.
 */
function markWriting(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true, mode: OWNER_ONLY_DIR });
  try {
    return markWriter(dataDir);
  } catch (error) {
    if (error instanceof DataDirInUse) throw new CommandError(error.message);
    throw error;
  }
}

/**
 * Opening the services moves an older data dir to this build's format. A server that claims one in
 * an older format is of an older build, which could not read the data once moved, or one of this
 * build whose start is moving it right now.
 */
async function refuseMovingServedFormat(dataDir: string): Promise<void> {
  const server = servingProcess(dataDir);
  const format = server === undefined ? undefined : await formatBehind(dataDir);
  if (format === undefined) return;
  throw new CommandError(
    `${dataDir} is served by process ${server} in data format ${format}, older than this build's (${FORMAT_VERSION}), ` +
      'which a server of an older build could not read: start this build\'s server on it first (it moves the data dir; if that is what ' +
      'this process is doing, wait until it serves), or use the CLI of the build that serves it',
  );
}
