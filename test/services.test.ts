import t from 'tap';
import { createHook } from 'node:async_hooks';
import { readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { closeServices, openServices } from '../src/services.js';

const logger = pino({ level: 'silent' });

/** The files under `dir` this process holds open (its fds, as Linux lists them). */
function openFilesUnder(dir: string): string[] {
  const fds = '/proc/self/fd';
  const real = realpathSync(dir);
  return readdirSync(fds).flatMap((fd) => {
    try {
      const target = readlinkSync(`${fds}/${fd}`);
      return target.startsWith(`${real}/`) ? [target] : [];
    } catch {
      return []; // the fd that listed the directory, closed since
    }
  });
}

/**
 * How many of the timers `attempt` started still run a moment after it settled: its one-shot ones
 * (lmdb-js renews its read transaction after 1 ms) have fired by then, an interval not cleared has not.
 */
async function timersLeftBy(attempt: () => Promise<unknown>): Promise<number> {
  const running = new Set<number>();
  let attempting = true;
  const hook = createHook({
    init: (asyncId, type) => void (attempting && type === 'Timeout' && running.add(asyncId)),
    destroy: (asyncId) => void running.delete(asyncId),
  }).enable();
  try {
    await attempt();
    attempting = false;
    await sleep(50);
  } finally {
    hook.disable();
  }
  return running.size;
}

t.test(
  'a step failing late (a signing key that does not parse) leaves the store closed and the runtime stopped',
  { skip: process.platform !== 'linux' && 'reads /proc/self/fd' },
  async (t) => {
    const dataDir = t.testdir();
    const config = loadConfig({ SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'silent' });
    const deps = await openServices(config, { logger });
    const keys = deps.store.db('signing_keys');
    const [kid] = [...keys.getKeys({})];
    const stored = keys.get(kid);
    await deps.store.commit(() => keys.put(kid, { ...stored, privateJwk: { ...stored.privateJwk, d: 'not-a-key' } }));
    t.not(openFilesUnder(dataDir).length, 0, 'an open store holds files of the data dir open');
    await closeServices(deps);
    t.same(openFilesUnder(dataDir), [], 'a closed one none');

    // SigningKeys.open fails, after the pepper, the runtime and the migrations.
    let failure: unknown;
    const left = await timersLeftBy(() => openServices(config, { logger }).catch((error) => (failure = error)));
    t.match(failure, { name: 'DataError' }, 'the open fails: the key does not import');
    t.same(openFilesUnder(dataDir), [], 'the store is closed');
    t.equal(left, 0, 'the runtime is stopped: its sweep timer no longer runs');
  },
);
