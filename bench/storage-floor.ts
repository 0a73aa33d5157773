import { openStore } from '../src/storage/store.js';
import { USER_VIEWS_DB } from '../src/features/users/profile-views.js';
import { measureLanes, type LaneLoad, type LaneMeasurement } from './lanes.js';

/** Durable record rewrites with no HTTP and no service code: what the disk allows profile writes on this data set. */
export type StorageFloor = LaneMeasurement;
export type FloorLoad = LaneLoad;

/**
 * On a service's data dir (the service idle: LMDB serves both processes), `connections` lanes each
 * read a random user's view record and commit it back unchanged through the store's own commit path,
 * one awaited write per lane at a time, as the profile write scenario's connections do: one record
 * put per durable commit, on the same B-tree. What it measures is what the disk and lmdb-js allow.
 */
export async function measureStorageFloor(dataDir: string, appId: string, userIds: readonly string[], load: FloorLoad): Promise<StorageFloor> {
  if (userIds.length === 0) throw new Error('the storage floor needs seeded users');
  const store = openStore(dataDir);
  try {
    const records = store.db<Buffer>(USER_VIEWS_DB, { encoding: 'binary' });
    return await measureLanes(load, async () => {
      const key = [appId, userIds[Math.floor(Math.random() * userIds.length)]];
      const record = records.getBinary(key);
      if (!record) throw new Error(`no view record for user ${String(key[1])}`);
      await store.commit(() => records.put(key, record));
    });
  } finally {
    await store.close();
  }
}
