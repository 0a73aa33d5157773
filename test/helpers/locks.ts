import type { TestServer } from './server.js';
import type { KeyLocks } from '../../src/runtime/locks.js';

/**
 * Takes `keys` in the server's runtime as a turn would, answering the release: requests sent
 * meanwhile queue behind it in the order they reach the lock, which lets a test line up a race.
 */
export const holdLocks = (server: TestServer, keys: readonly string[]): Promise<() => void> =>
  (server.deps.runtime as unknown as { locks: KeyLocks }).locks.acquire(keys);
