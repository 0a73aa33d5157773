import { setTimeout as sleep } from 'node:timers/promises';
import type { TestServer } from './server.js';
import type { KeyLocks } from '../../src/runtime/locks.js';

const locksOf = (server: TestServer) => (server.deps.runtime as unknown as { locks: KeyLocks }).locks;

/**
 * Takes `keys` in the server's runtime as a turn would, answering the release: requests sent
 * meanwhile queue behind it in the order they reach the lock, which lets a test line up a race.
 */
export const holdLocks = (server: TestServer, keys: readonly string[]): Promise<() => void> => locksOf(server).acquire(keys);

/**
 * Sends a request (`send`) and resolves once it waits for `key`, so the next one sent queues behind
 * it: the order of a race is set by the queue, not by how long a request takes to get there.
 */
export async function queueOn<T>(server: TestServer, key: string, send: () => Promise<T>): Promise<{ answer: Promise<T> }> {
  const tails = (locksOf(server) as unknown as { tails: Map<string, Promise<void>> }).tails;
  const before = tails.get(key);
  const sent = send();
  for (let waited = 0; tails.get(key) === before; waited += 5) {
    if (waited > 10_000) throw new Error(`no turn queued for ${key} within 10 s`);
    await sleep(5);
  }
  // Wrapped: an async function would otherwise wait for the answer itself, which waits for the lock.
  return { answer: sent };
}
