import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  /** Registers a gauge read at scrape time. */
  gauge(name: string, help: string, read: () => number): void;
  /** The Prometheus text exposition of every metric. */
  text(): Promise<string>;
  readonly contentType: string;
}

const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1];

interface RouteStats {
  /** Answers by method, then status. */
  answers: Map<string, Map<number, number>>;
  /** Observations at or below each bucket bound (not yet cumulative). */
  buckets: number[];
  count: number;
  sum: number;
}

const label = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/**
 * Request counts and latencies are kept as plain numbers on the hot path (prom-client's label
 * hashing cost ~12% of a profile read) and written out in the exposition format at scrape time;
 * process metrics and gauges come from prom-client.
 */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const routes = new Map<string, RouteStats>();

  function requestText(): string {
    const lines = [
      '# HELP http_requests_total HTTP requests answered, by route and status',
      '# TYPE http_requests_total counter',
    ];
    for (const [route, stats] of routes) {
      for (const [method, byStatus] of stats.answers) {
        for (const [status, count] of byStatus) {
          lines.push(`http_requests_total{route="${label(route)}",method="${method}",status="${status}"} ${count}`);
        }
      }
    }
    lines.push('# HELP http_request_duration_seconds Time from request to answer, by route');
    lines.push('# TYPE http_request_duration_seconds histogram');
    for (const [route, stats] of routes) {
      let cumulative = 0;
      LATENCY_BUCKETS.forEach((bound, i) => {
        cumulative += stats.buckets[i];
        lines.push(`http_request_duration_seconds_bucket{le="${bound}",route="${label(route)}"} ${cumulative}`);
      });
      lines.push(`http_request_duration_seconds_bucket{le="+Inf",route="${label(route)}"} ${stats.count}`);
      lines.push(`http_request_duration_seconds_sum{route="${label(route)}"} ${stats.sum}`);
      lines.push(`http_request_duration_seconds_count{route="${label(route)}"} ${stats.count}`);
    }
    return lines.join('\n') + '\n';
  }

  return {
    contentType: registry.contentType,
    observeRequest(route, method, status, seconds) {
      let stats = routes.get(route);
      if (!stats) routes.set(route, (stats = { answers: new Map(), buckets: LATENCY_BUCKETS.map(() => 0), count: 0, sum: 0 }));
      let byStatus = stats.answers.get(method);
      if (!byStatus) stats.answers.set(method, (byStatus = new Map()));
      byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
      for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
        if (seconds <= LATENCY_BUCKETS[i]) {
          stats.buckets[i]++;
          break;
        }
      }
      stats.count++;
      stats.sum += seconds;
    },
    gauge(name, help, read) {
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(read());
        },
      });
    },
    async text() {
      return (await registry.metrics()) + requestText();
    },
  };
}
