import type { Config } from '../config.js';
import type { Deps } from '../deps.js';
import { openServices, closeServices } from '../services.js';
import { createLogger } from '../lib/logger.js';
import pino from 'pino';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
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
  if (!options.create && !existsSync(join(config.dataDir, 'data.mdb'))) {
    throw new CommandError(`${config.dataDir} holds no data (check SVC_DATA_DIR)`);
  }
  const logger = createLogger(config.logLevel, pino.destination(2));
  const deps = await openServices(config, { logger, readOnly: options.readOnly });
  try {
    return await work(deps);
  } finally {
    await closeServices(deps);
  }
}
