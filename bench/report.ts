import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import type { Measured } from './measure.js';
import type { Bar } from './scenarios.js';

export interface ScenarioOutcome {
  name: string;
  status: 'measured' | 'skipped' | 'failed';
  reason?: string;
  result?: Measured;
  /** The bare uWS ceiling, measured in rounds alternating with this route's (the machine is shared and noisy). */
  ceiling?: Measured;
  rounds?: { route: Measured; ceiling: Measured }[];
  /** req/s divided by the ceiling's req/s. */
  ratio?: number;
  requestsPerOperation?: number;
  /** Set when the route ran with other than the default connection count. */
  connections?: number;
  bar?: Bar;
  /** Whether every figure the bar names is met; undefined without a bar. */
  barMet?: boolean;
}

export function judge(result: Measured, ratio: number, bar: Bar | undefined): boolean | undefined {
  if (!bar) return undefined;
  return (bar.ratio === undefined || ratio >= bar.ratio) && (bar.p99Ms === undefined || result.p99Ms <= bar.p99Ms);
}

const ms = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(1));
const barText = (bar?: Bar) =>
  bar ? [bar.ratio !== undefined ? `≥${bar.ratio}×` : '', bar.p99Ms !== undefined ? `p99≤${bar.p99Ms}ms` : ''].filter(Boolean).join(' ') : '';

export function formatTable(outcomes: readonly ScenarioOutcome[]): string {
  const header = ['route', 'req/s', 'p50 ms', 'p99 ms', 'ceiling req/s', 'ceiling p99', '× ceiling', 'cpu µs/req', 'loop µs/req', 'cpu × ceiling', 'faults/1k', 'bar', 'met'];
  const rows: string[][] = [];
  const notes: string[] = [];
  for (const o of outcomes) {
    if (!o.result) {
      rows.push([o.name, '-', '-', '-', '-', '-', '-', '-', '-', '-', '-', barText(o.bar), o.status]);
      notes.push(`  ${o.name}: ${o.status}: ${o.reason}`);
      continue;
    }
    const perOp = o.requestsPerOperation && o.requestsPerOperation > 1 ? ` (${o.requestsPerOperation} req/op)` : '';
    const connections = o.connections ? ` [c=${o.connections}]` : '';
    rows.push([
      o.name + perOp + connections,
      o.result.requestsPerSecond.toFixed(0),
      ms(o.result.p50Ms),
      ms(o.result.p99Ms),
      o.ceiling!.requestsPerSecond.toFixed(0),
      ms(o.ceiling!.p99Ms),
      o.ratio!.toFixed(2),
      o.result.cpuMicrosPerRequest.toFixed(1),
      o.result.loopCpuMicrosPerRequest.toFixed(1),
      (o.result.cpuMicrosPerRequest / o.ceiling!.cpuMicrosPerRequest).toFixed(1),
      o.result.majorFaultsPerThousand.toFixed(2),
      barText(o.bar),
      o.status === 'failed' ? 'FAILED' : o.barMet === undefined ? '' : o.barMet ? 'yes' : 'NO',
    ]);
    if (o.reason) notes.push(`  ${o.name}: ${o.reason}`);
  }
  return [formatColumns(header, rows), ...(notes.length ? ['', ...notes] : [])].join('\n');
}

/** A plain-text table: the header, a rule, the rows; the first column left-aligned, the others right. */
export function formatColumns(header: readonly string[], rows: readonly string[][]): string {
  const widths = header.map((_, c) => Math.max(header[c].length, ...rows.map((r) => r[c].length)));
  const line = (cells: readonly string[]) => cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** Where a run started at `startedAt` keeps its files: bench/results/<timestamp> of the checkout (git-ignored). */
export const resultsPath = (startedAt: Date, suffix: string) =>
  join(fileURLToPath(new URL('../../bench/results/', import.meta.url)), startedAt.toISOString().replace(/[:.]/g, '-') + suffix);

/** Writes the run as JSON; answers the file. */
export async function writeResults(results: object, startedAt: Date): Promise<string> {
  const file = resultsPath(startedAt, '.json');
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify(results, null, 2) + '\n');
  return file;
}
