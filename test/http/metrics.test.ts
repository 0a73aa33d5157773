import t from 'tap';
import { startServer } from '../helpers/server.js';

t.test('/metrics exposes request counts, latency histograms, actor and LMDB gauges', async (t) => {
  const server = await startServer(t);
  await server.request('GET', '/health');
  await server.request('GET', '/health');
  await server.request('GET', '/nowhere');
  const res = await server.request('GET', '/metrics');
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/plain/);
  t.match(res.text, 'http_requests_total{route="GET /health",method="GET",status="200"} 2');
  t.match(res.text, 'http_requests_total{route="fallback",method="GET",status="404"} 1');
  t.match(res.text, /http_request_duration_seconds_bucket\{le="\+Inf",route="GET \/health"\} 2/);
  t.match(res.text, /http_request_duration_seconds_count\{route="GET \/health"\} 2/);
  t.match(res.text, /^actors_resident \d+$/m);
  t.match(res.text, /^lmdb_map_size_bytes \d+$/m);
  t.match(res.text, /^process_resident_memory_bytes \d+$/m);
});
