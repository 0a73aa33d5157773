import type { Logger } from 'pino';
import { holdsData, openStore, type Store } from './store.js';
import { DataDirNotReady } from './not-ready.js';

/** The stored data's format; bump it and add a step to `src/format-steps.ts` when the layout changes. */
export const FORMAT_VERSION = 12;

/** `steps[n]` moves a data dir from format n to n + 1, inside one write transaction. */
export type MigrationStep = (store: Store) => void;

const VERSION_KEY = 'format_version';

/** The format a data dir says it holds; undefined before the first start. */
export function storedFormatVersion(store: Store): number | undefined {
  return store.db('meta').get(VERSION_KEY);
}

/** The format of `dataDir` when it is older than this build's; undefined otherwise (a newer one is refused at open). */
export async function formatBehind(dataDir: string): Promise<number | undefined> {
  if (!holdsData(dataDir)) return undefined;
  const store = openStore(dataDir, { readOnly: true });
  try {
    const version = storedFormatVersion(store);
    return version !== undefined && version < FORMAT_VERSION ? version : undefined;
  } finally {
    await store.close();
  }
}

const newerFormat = (store: Store, version: number) =>
  new DataDirNotReady(`Data dir ${store.path} has format ${version}, newer than this build understands (${FORMAT_VERSION})`);

/**
 * Refuses (`DataDirNotReady`) a data dir of a newer format, before a start writes to it: opening this
 * build's databases would make again those a newer step dropped.
 */
export function refuseNewerFormat(store: Store): void {
  const version = storedFormatVersion(store);
  if (version !== undefined && version > FORMAT_VERSION) throw newerFormat(store, version);
}

/** For a reader that must not migrate: refuses (`DataDirNotReady`) a data dir not in this build's format. */
export function requireCurrentFormat(store: Store): void {
  const version = storedFormatVersion(store);
  if (version === FORMAT_VERSION) return;
  if (version === undefined) throw new DataDirNotReady(`Data dir ${store.path} has no format version yet: a server start stamps it`);
  if (version > FORMAT_VERSION) throw newerFormat(store, version);
  throw new DataDirNotReady(`Data dir ${store.path} has format ${version}, older than this build's (${FORMAT_VERSION}): a server start migrates it`);
}

export async function migrate(store: Store, logger: Logger, migrations: Record<number, MigrationStep>): Promise<number> {
  refuseNewerFormat(store);
  const meta = store.db('meta');
  let version = storedFormatVersion(store);
  if (version === undefined) {
    await store.commit(() => meta.put(VERSION_KEY, FORMAT_VERSION));
    return FORMAT_VERSION;
  }
  while (version < FORMAT_VERSION) {
    const step = migrations[version];
    if (!step) throw new Error(`No migration from data format ${version}`);
    const from: number = version;
    let stepped = false;
    await store.commit(() => {
      // Read again in the write transaction, which another process migrating the same dir (an
      // upgrade child outliving its killed server) cannot share: a step it made is not made twice.
      if (storedFormatVersion(store) !== from) return;
      step(store);
      meta.put(VERSION_KEY, from + 1);
      stepped = true;
    });
    if (stepped) logger.info({ from, to: from + 1 }, 'migrated data format');
    version = storedFormatVersion(store)!;
  }
  refuseNewerFormat(store);
  return version;
}
