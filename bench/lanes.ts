import { performance } from 'node:perf_hooks';

/** What lanes of one awaited write at a time achieved over a measured stretch (both storage measurements are of writes). */
export interface LaneMeasurement {
  /** Lanes, each with one operation in flight. */
  connections: number;
  writes: number;
  seconds: number;
  writesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU time of all this process's threads per operation (a store's writer thread included). */
  cpuMicrosPerWrite: number;
  /** The share of the time the event loop was busy. */
  loopUtilization: number;
}

export interface LaneLoad {
  seconds: number;
  warmupSeconds: number;
  connections: number;
}

/**
 * `load.connections` lanes each repeat `operation`, one awaited at a time, for the warm-up and then
 * for the measured seconds, as the bench's wrk connections each keep one request in flight. The first
 * failure stops every lane, and is thrown once they have all ended.
 */
export async function measureLanes(load: LaneLoad, operation: () => Promise<unknown>): Promise<LaneMeasurement> {
  const drive = async (seconds: number, latencies?: number[]) => {
    let until = performance.now() + seconds * 1000;
    const lane = async () => {
      while (performance.now() < until) {
        const startedAt = performance.now();
        await operation().catch((error) => {
          until = 0;
          throw error;
        });
        latencies?.push(performance.now() - startedAt);
      }
    };
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
}
