import t from 'tap';
import { parseWrkOutput } from '../../bench/wrk.js';

const sample = `Running 5s test @ http://127.0.0.1:33439/
  1 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.09ms    1.70ms  25.00ms   94.64%
    Req/Sec    66.80k    20.55k  118.53k    74.00%
  Latency Distribution
     50%  775.00us
     75%    1.00ms
     90%    1.27ms
     99%    9.21ms
  331858 requests in 5.01s, 224.70MB read
Requests/sec:  66210.43
Transfer/sec:     44.83MB
`;

t.test('reads rate, totals and percentiles in their units', async (t) => {
  const result = parseWrkOutput(sample);
  t.equal(result.requests, 331858);
  t.equal(result.seconds, 5.01);
  t.equal(result.requestsPerSecond, 66210.43);
  t.equal(result.p50Ms, 0.775);
  t.equal(result.p75Ms, 1);
  t.equal(result.p90Ms, 1.27);
  t.equal(result.p99Ms, 9.21);
  t.equal(result.non2xx, 0);
  t.same(result.socketErrors, { connect: 0, read: 0, write: 0, timeout: 0 });
});

t.test('reads error lines and second-scale latencies', async (t) => {
  const text = sample
    .replace('99%    9.21ms', '99%    1.50s')
    .replace('Requests/sec:', '  Non-2xx or 3xx responses: 42\n  Socket errors: connect 1, read 2, write 3, timeout 4\nRequests/sec:')
    .replace('331858 requests in 5.01s', '72000 requests in 1.00m');
  const result = parseWrkOutput(text);
  t.equal(result.p99Ms, 1500);
  t.equal(result.non2xx, 42);
  t.same(result.socketErrors, { connect: 1, read: 2, write: 3, timeout: 4 });
  t.equal(result.seconds, 60);
});

t.test('refuses output without the latency distribution', async (t) => {
  t.throws(() => parseWrkOutput('Running 5s test @ http://x/\nRequests/sec: 10\n'), /wrk output has no/);
});
