import type { Config } from '../config.js';
import type { Deps } from '../deps.js';
import { openServices, closeServices } from '../services.js';
import { createLogger } from '../lib/logger.js';
import pino from 'pino';

/**
 * Opens the data dir next to a running server (LMDB is multi-process), runs `work`, closes it.
 * Logs go to stderr so stdout holds only the command's result.
 */
export async function withServices<T>(config: Config, work: (deps: Deps) => Promise<T> | T): Promise<T> {
  const logger = createLogger(config.logLevel, pino.destination(2));
  const deps = await openServices(config, { logger });
  try {
    return await work(deps);
  } finally {
    await closeServices(deps);
  }
}
