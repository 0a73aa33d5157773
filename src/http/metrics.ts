import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { RequestRecorder } from './server.js';

export interface Metrics {
  /**
   * The recorder of one route's answers to one method; the same one every time it is asked for.
   * The server binds it when it mounts the route, so counting a request looks up only its status.
   */
  requestRecorder(route: string, method: string): RequestRecorder;
  /** Registers a gauge read at scrape time. */
  gauge(name: string, help: string, read: () => number): void;
  /** The Prometheus text exposition of every metric. */
  text(): Promise<string>;
  readonly contentType: string;
}

const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1];

interface RouteStats {
  readonly route: string;
  /** Answers by method, then status, each in the order first answered. */
  readonly answers: Map<string, Map<number, number>>;
  /** Requests whose client went away before the answer, by method in the order first aborted. */
  readonly aborts: Map<string, number>;
  readonly recorders: Map<string, RequestRecorder>;
  /** Observations at or below each bucket bound (not yet cumulative). */
  readonly buckets: number[];
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
  /** Routes in the order of their first answer: routes mounted but never asked for are not listed. */
  const answeredRoutes: RouteStats[] = [];
  /** Routes in the order of their first abort. */
  const abortedRoutes: RouteStats[] = [];

  function routeStats(route: string): RouteStats {
    let stats = routes.get(route);
    if (!stats) {
      stats = { route, answers: new Map(), aborts: new Map(), recorders: new Map(), buckets: LATENCY_BUCKETS.map(() => 0), count: 0, sum: 0 };
      routes.set(route, stats);
    }
    return stats;
  }

  function bindRecorder(stats: RouteStats, method: string): RequestRecorder {
    const byStatus = new Map<number, number>();
    return {
      answered(status, seconds) {
        if (stats.count === 0) answeredRoutes.push(stats);
        if (byStatus.size === 0) stats.answers.set(method, byStatus);
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
      aborted() {
        if (stats.aborts.size === 0) abortedRoutes.push(stats);
        stats.aborts.set(method, (stats.aborts.get(method) ?? 0) + 1);
      },
    };
  }

  function requestText(): string {
    const lines = [
      '# HELP http_requests_total HTTP requests answered, by route and status',
      '# TYPE http_requests_total counter',
    ];
    for (const { route, answers } of answeredRoutes) {
      for (const [method, byStatus] of answers) {
        for (const [status, count] of byStatus) {
          lines.push(`http_requests_total{route="${label(route)}",method="${method}",status="${status}"} ${count}`);
        }
      }
    }
    lines.push('# HELP http_requests_aborted_total HTTP requests whose client went away before the answer, by route');
    lines.push('# TYPE http_requests_aborted_total counter');
    for (const { route, aborts } of abortedRoutes) {
      for (const [method, count] of aborts) lines.push(`http_requests_aborted_total{route="${label(route)}",method="${method}"} ${count}`);
    }
    lines.push('# HELP http_request_duration_seconds Time from request to answer, by route');
    lines.push('# TYPE http_request_duration_seconds histogram');
    for (const stats of answeredRoutes) {
      const route = label(stats.route);
      let cumulative = 0;
      LATENCY_BUCKETS.forEach((bound, i) => {
        cumulative += stats.buckets[i];
        lines.push(`http_request_duration_seconds_bucket{le="${bound}",route="${route}"} ${cumulative}`);
      });
      lines.push(`http_request_duration_seconds_bucket{le="+Inf",route="${route}"} ${stats.count}`);
      lines.push(`http_request_duration_seconds_sum{route="${route}"} ${stats.sum}`);
      lines.push(`http_request_duration_seconds_count{route="${route}"} ${stats.count}`);
    }
    return lines.join('\n') + '\n';
  }

  return {
    contentType: registry.contentType,
    requestRecorder(route, method) {
      const stats = routeStats(route);
      let record = stats.recorders.get(method);
      if (!record) stats.recorders.set(method, (record = bindRecorder(stats, method)));
      return record;
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
