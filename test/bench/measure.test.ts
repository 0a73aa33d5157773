import t from 'tap';
import { hungServer } from '../helpers/hung-server.js';
import { createServer } from 'node:http';
import { floorGrowth, measurePaired, untrusted } from '../../bench/measure.js';
import { writeRequestScript } from '../../bench/lua.js';
import { parseOptions, UsageError } from '../../bench/options.js';

/** A real HTTP server in this process, as wrk's target (its CPU figures are this process's). */
async function target(t: { teardown(fn: () => unknown): void }) {
  const server = createServer((_req, res) => res.end('{}'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('no address');
  return { url: `http://127.0.0.1:${address.port}/`, pid: process.pid };
}

t.test('a route on fewer connections than --threads runs with one thread per connection (wrk refuses more)', async (t) => {
  const server = await target(t);
  const dir = t.testdir();
  const settings = { seconds: 1, rounds: 1, warmupSeconds: 0, threads: 2, connections: 1, dir };
  const script = await writeRequestScript(dir, 'get', { method: 'GET', path: '/' });
  const measured = await measurePaired(server, server, { route: script, ceiling: script }, settings);
  t.ok(measured.route.requests > 0, 'the route answered');
  t.ok(measured.ceiling.requests > 0, 'the ceiling answered');
});

t.test('--threads above --connections is a usage error, not a run whose every route fails', async (t) => {
  t.equal(parseOptions(['--threads', '2', '--connections', '2']).threads, 2);
  const error = t.throws(() => parseOptions(['--threads', '4', '--connections', '2']), /--threads .*at most --connections/);
  t.type(error, UsageError);
  t.type(t.throws(() => parseOptions(['--threads', '65'])), UsageError, 'the default is 64 connections');
});

t.test('a route whose requests go unanswered is failed, not measured with a p99 of 0', async (t) => {
  const ceiling = await target(t);
  const address = await hungServer(t);
  const dir = t.testdir();
  const script = await writeRequestScript(dir, 'get', { method: 'GET', path: '/' });
  const settings = { seconds: 1, rounds: 1, warmupSeconds: 0, threads: 1, connections: 4, dir };
  const measured = await measurePaired(ceiling, { url: `http://127.0.0.1:${address.port}/`, pid: process.pid }, { route: script, ceiling: script }, settings);
  t.equal(measured.route.requests, 0, 'wrk answers 0 requests');
  t.same(measured.route.socketErrors, { connect: 0, read: 0, write: 0, timeout: 0 }, 'and no error');
  t.equal(untrusted(measured), 'a round answered no request (none failed: they went unanswered)');

  const hungCeiling = await measurePaired({ url: `http://127.0.0.1:${address.port}/`, pid: process.pid }, ceiling, { route: script, ceiling: script }, settings);
  t.equal(untrusted(hungCeiling), 'the ceiling: a round answered no request (none failed: they went unanswered)', 'nor is a ratio to a ceiling that answered nothing');

  const answered = await measurePaired(ceiling, ceiling, { route: script, ceiling: script }, settings);
  t.equal(untrusted(answered), undefined, 'a route that answers is trusted');
});

t.test('memory growth compares the floors of the earlier and later readings, not one reading with another', async (t) => {
  // The soak's run of 01:08 (2026-11-28): no trend, one high last reading, which the last-against-second rule read as +18.3%.
  t.ok(Math.abs(floorGrowth([97, 114, 106, 100, 104, 103, 91, 91, 115]) - (91 / 97 - 1)) < 1e-9, 'floors 97 then 91: flat');
  t.equal(floorGrowth([100, 150, 100, 150]), 0, 'a sawtooth is flat');
  t.ok(Math.abs(floorGrowth([100, 110, 130, 140]) - 0.3) < 1e-9, 'a rising floor grows: 100 then 130');
  t.equal(floorGrowth([120]), 0, 'one reading is both halves');
});
