import type { Measured } from '../../bench/measure.js';

/** A route's or ceiling's measurement over 10 s with the given figures (a quarter of the CPU off the loop). */
export const measured = (requestsPerSecond: number, p50Ms: number, p99Ms: number, cpu: number): Measured => ({
  requests: requestsPerSecond * 10,
  seconds: 10,
  requestsPerSecond,
  p50Ms,
  p75Ms: p50Ms,
  p90Ms: p99Ms,
  p99Ms,
  non2xx: 0,
  socketErrors: { connect: 0, read: 0, write: 0, timeout: 0 },
  cpuMicrosPerRequest: cpu,
  loopCpuMicrosPerRequest: cpu * 0.75,
  majorFaultsPerThousand: 0,
});
