import t from 'tap';
import { formatTable, judge, type ScenarioOutcome } from '../../bench/report.js';
import { measured } from '../helpers/measured.js';

t.test('a measured row names its own and the ceiling’s figures in their columns; a skipped one has dashes and a note', async (t) => {
  const route = measured(12000, 4.72, 28.5, 90);
  const ceiling = measured(100000, 0.5, 1.03, 9);
  const bar = { ratio: 0.15, p99Ms: 10 };
  const outcomes: ScenarioOutcome[] = [
    { name: 'profile write', status: 'measured', result: route, ceiling, ratio: 0.12, bar, barMet: judge(route, 0.12, bar) },
    { name: 'group create', status: 'skipped', reason: 'route not available (404)' },
  ];
  const [header, , write, skipped, , note] = formatTable(outcomes).split('\n');
  const cells = (line: string) => line.trim().split(/\s{2,}/);
  const column = (name: string) => cells(header).indexOf(name);
  const row = cells(write);
  t.equal(row[column('req/s')], '12000');
  t.equal(row[column('p99 ms')], '28.5');
  t.equal(row[column('ceiling req/s')], '100000');
  t.equal(row[column('ceiling p99')], '1.03', 'the ceiling’s own p99, beside the route’s');
  t.equal(row[column('× ceiling')], '0.12');
  t.equal(row[column('cpu × ceiling')], '10.0');
  t.equal(row[column('bar')], '≥0.15× p99≤10ms');
  t.equal(row[column('met')], 'NO');
  t.match(cells(skipped), ['group create', '-', '-']);
  t.match(note, /group create: skipped: route not available \(404\)/);
});

t.test('a bar is met only when every figure it names is', async (t) => {
  const bar = { ratio: 0.5, p99Ms: 2 };
  t.equal(judge(measured(1, 1, 1.9, 1), 0.6, bar), true);
  t.equal(judge(measured(1, 1, 2.1, 1), 0.6, bar), false, 'p99 over');
  t.equal(judge(measured(1, 1, 1.9, 1), 0.4, bar), false, 'ratio under');
  t.equal(judge(measured(1, 1, 99, 1), 0.4, undefined), undefined, 'no bar');
});
