import { performance } from 'node:perf_hooks';
import { openStore } from '../src/storage/store.js';
import { USER_VIEWS_DB } from '../src/features/users/profile-views.js';

/** Durable record rewrites with no HTTP and no service code: what the disk allows profile writes on this data set. */
export interface StorageFloor {
  /** Lanes, each with one write in flight. */
  connections: number;
  writes: number;
  seconds: number;
  writesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU time of all the bench process's threads per write (the store's writer thread included). */
  cpuMicrosPerWrite: number;
  /** The share of the time the event loop was busy. */
  loopUtilization: number;
}

export interface FloorLoad {
  seconds: number;
  warmupSeconds: number;
  connections: number;
}

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
    const rewrite = async () => {
      const key = [appId, userIds[Math.floor(Math.random() * userIds.length)]];
      const record = records.getBinary(key);
      if (!record) throw new Error(`no view record for user ${String(key[1])}`);
      await store.commit(() => records.put(key, record));
    };
    const drive = async (seconds: number, latencies?: number[]) => {
      let until = performance.now() + seconds * 1000;
      const lane = async () => {
        while (performance.now() < until) {
          const startedAt = performance.now();
          await rewrite().catch((error) => {
            until = 0;
            throw error;
          });
          latencies?.push(performance.now() - startedAt);
        }
      };
      // Every lane ends before the store closes, the first failure stopping them all.
      const lanes = await Promise.allSettled(Array.from({ length: load.connections }, lane));
      const failed = lanes.find((lane) => lane.status === 'rejected');
      if (failed) throw failed.reason;
    };
    await drive(load.warmupSeconds);
    const latencies: number[] = [];
    const cpuBefore = process.cpuUsage();
    const loopBefore = performance.eventLoopUtilization();
    const startedAt = performance.now();
    await drive(load.seconds, latencies);
    const seconds = (performance.now() - startedAt) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    latencies.sort((a, b) => a - b);
    const percentile = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((latencies.length * p) / 100))];
    return {
      connections: load.connections,
      writes: latencies.length,
      seconds,
      writesPerSecond: latencies.length / seconds,
      p50Ms: percentile(50),
      p99Ms: percentile(99),
      cpuMicrosPerWrite: (cpu.user + cpu.system) / latencies.length,
      loopUtilization: performance.eventLoopUtilization(loopBefore).utilization,
    };
  } finally {
    await store.close();
  }
}
