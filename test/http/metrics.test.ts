import t from 'tap';
import { startServer } from '../helpers/server.js';

t.test('/metrics exposes request counts, latency histograms, actor and LMDB gauges', async (t) => {
  const server = await startServer(t);
  await server.request('GET', '/health');
  await server.request('GET', '/health');
  await server.request('GET', '/nowhere');
  await server.request('POST', '/nowhere');
  await server.request('DELETE', '/health');
  await server.request('OPTIONS', '/health');
  const res = await server.request('GET', '/metrics');
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/plain/);
  t.match(res.text, 'http_requests_total{route="GET /health",method="GET",status="200"} 2');
  t.match(res.text, 'http_requests_total{route="fallback",method="GET",status="404"} 1');
  t.match(res.text, 'http_requests_total{route="fallback",method="POST",status="404"} 1');
  t.match(res.text, 'http_requests_total{route="fallback",method="DELETE",status="405"} 1');
  t.match(res.text, 'http_requests_total{route="OPTIONS *",method="OPTIONS",status="204"} 1');
  t.match(res.text, /http_request_duration_seconds_count\{route="fallback"\} 3/);
  t.notMatch(res.text, 'route="PUT /me/applications/:app/data"', 'a mounted route is listed from its first request on');
  t.match(res.text, /http_request_duration_seconds_bucket\{le="\+Inf",route="GET \/health"\} 2/);
  t.match(res.text, /http_request_duration_seconds_count\{route="GET \/health"\} 2/);
  t.match(res.text, /^actors_resident \d+$/m);
  t.match(res.text, /^lmdb_map_size_bytes \d+$/m);
  t.match(res.text, /^process_resident_memory_bytes \d+$/m);
});

t.test('latency buckets are cumulative, the sum adds up, and route labels are escaped', async (t) => {
  const { createMetrics } = await import('../../src/http/metrics.js');
  const metrics = createMetrics();
  const recordA = metrics.requestRecorder('GET /a', 'GET');
  recordA(200, 0.0003);
  recordA(200, 0.02);
  recordA(404, 2);
  metrics.requestRecorder('GET /"q"', 'GET')(200, 0.0001);
  const text = await metrics.text();
  t.match(text, 'http_requests_total{route="GET /a",method="GET",status="200"} 2');
  t.match(text, 'http_requests_total{route="GET /a",method="GET",status="404"} 1');
  t.match(text, 'http_request_duration_seconds_bucket{le="0.00025",route="GET /a"} 0');
  t.match(text, 'http_request_duration_seconds_bucket{le="0.0005",route="GET /a"} 1');
  t.match(text, 'http_request_duration_seconds_bucket{le="0.01",route="GET /a"} 1');
  t.match(text, 'http_request_duration_seconds_bucket{le="0.025",route="GET /a"} 2');
  t.match(text, 'http_request_duration_seconds_bucket{le="1",route="GET /a"} 2');
  t.match(text, 'http_request_duration_seconds_bucket{le="+Inf",route="GET /a"} 3');
  t.match(text, /http_request_duration_seconds_sum\{route="GET \/a"\} 2\.0203\d*\n/);
  t.match(text, 'http_request_duration_seconds_count{route="GET /\\"q\\""} 1');
});

t.test('a recorder is bound once per route and method; routes are listed in the order first answered', async (t) => {
  const { createMetrics } = await import('../../src/http/metrics.js');
  const metrics = createMetrics();
  const recordB = metrics.requestRecorder('GET /b', 'GET');
  const recordA = metrics.requestRecorder('GET /a', 'GET');
  metrics.requestRecorder('GET /unused', 'GET');
  t.equal(metrics.requestRecorder('GET /a', 'GET'), recordA, 'asking again gives the same recorder');
  recordA(200, 0.001);
  metrics.requestRecorder('GET /a', 'GET')(200, 0.001);
  recordB(500, 0.001);
  metrics.requestRecorder('fallback', 'POST')(404, 0.001);
  metrics.requestRecorder('fallback', 'GET')(404, 0.001);
  metrics.requestRecorder('fallback', 'POST')(405, 0.001);
  const text = await metrics.text();
  const requests = text.split('\n').filter((line) => line.startsWith('http_requests_total{'));
  t.same(requests, [
    'http_requests_total{route="GET /a",method="GET",status="200"} 2',
    'http_requests_total{route="GET /b",method="GET",status="500"} 1',
    'http_requests_total{route="fallback",method="POST",status="404"} 1',
    'http_requests_total{route="fallback",method="POST",status="405"} 1',
    'http_requests_total{route="fallback",method="GET",status="404"} 1',
  ]);
  t.match(text, 'http_request_duration_seconds_count{route="fallback"} 3');
  t.notMatch(text, 'GET /unused', 'a route bound but never answered is not listed');
});
