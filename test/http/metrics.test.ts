import t from 'tap';
import { connect } from 'node:net';
import { startServer, type TestServer } from '../helpers/server.js';
import { rawRequest } from '../helpers/raw-http.js';

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
  recordA.answered(200, 0.0003);
  recordA.answered(200, 0.02);
  recordA.answered(404, 2);
  metrics.requestRecorder('GET /"q"', 'GET').answered(200, 0.0001);
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
  recordA.answered(200, 0.001);
  metrics.requestRecorder('GET /a', 'GET').answered(200, 0.001);
  recordB.answered(500, 0.001);
  metrics.requestRecorder('fallback', 'POST').answered(404, 0.001);
  metrics.requestRecorder('fallback', 'GET').answered(404, 0.001);
  metrics.requestRecorder('fallback', 'POST').answered(405, 0.001);
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

/** Sends a request's head and the start of its body, then closes the connection before the rest. */
function abandonRequest(server: TestServer, head: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1', () => {
      socket.write(`${head}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"data":`);
      // Once the server has the head, and so an unanswered request: a close before it would be no request at all.
      setTimeout(() => socket.destroy(), 50);
    });
    socket.on('close', () => resolve()).on('error', reject);
  });
}

/** /metrics once it shows `expected` (the server hears of a closed connection on its next turn). */
async function metricsShowing(server: TestServer, expected: string): Promise<string> {
  for (let tries = 0; ; tries++) {
    const { text } = await server.request('GET', '/metrics');
    if (text.includes(expected) || tries === 40) return text;
    await new Promise((r) => setTimeout(r, 50));
  }
}

t.test('a request whose client goes away before the answer is counted by route and method, not as answered, and logged at debug', async (t) => {
  const logLines: string[] = [];
  const server = await startServer(t, { env: { SVC_LOG_LEVEL: 'debug' }, logDestination: { write: (line: string) => void logLines.push(line) } });
  const credentials = `x-svc-app-key: ${server.app.key}\r\nx-svc-app-secret: ${server.app.secret}\r\n`;
  const head = `PUT /applications/${server.app.id}/users/user_1/data HTTP/1.1\r\nHost: x\r\n${credentials}`;
  await abandonRequest(server, head);
  await abandonRequest(server, head);
  await abandonRequest(server, head.replace('PUT', 'PATCH'));
  const expected = 'http_requests_aborted_total{route="PATCH /applications/:app/users/:user/data",method="PATCH"} 1';
  const text = await metricsShowing(server, expected);
  t.match(text, '# TYPE http_requests_aborted_total counter');
  t.match(text, 'http_requests_aborted_total{route="PUT /applications/:app/users/:user/data",method="PUT"} 2');
  t.match(text, expected);
  t.notMatch(text, 'http_requests_total{route="PUT /applications/:app/users/:user/data"', 'an abandoned request has no status');
  t.notMatch(text, 'http_request_duration_seconds_count{route="PUT /applications/:app/users/:user/data"}', 'nor a latency');
  t.notMatch(text, /http_requests_aborted_total\{route="GET \/metrics"/, 'a route answered is not listed as aborted');
  const logged = logLines.map((line) => JSON.parse(line)).filter((entry) => entry.route === 'PUT /applications/:app/users/:user/data');
  const started = logged.filter((entry) => entry.msg === 'request started').map((entry) => entry.requestId);
  t.equal(started.length, 2);
  t.same(logged.filter((entry) => entry.msg === 'request aborted').map((entry) => entry.requestId), started, 'each started request logs its abort, by its request ID');
  t.notOk(logged.some((entry) => entry.msg === 'request'), 'and no answer');
});

t.test('a body uWS gives up on midway (a chunk extension) counts as aborted: uWS closes its connection unanswered', async (t) => {
  const server = await startServer(t);
  const head = `PUT /applications/${server.app.id}/users/user_1/data HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
  const answer = await new Promise<string>((resolve) => {
    let text = '';
    const socket = connect(server.port, '127.0.0.1', () => socket.write(`${head}2;a=b\r\n{}\r\n0\r\n\r\n`));
    socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
    socket.on('close', () => resolve(text));
  });
  t.equal(answer, '', 'no answer');
  const expected = 'http_requests_aborted_total{route="PUT /applications/:app/users/:user/data",method="PUT"} 1';
  t.match(await metricsShowing(server, expected), expected);
});

t.test('aborts are listed by route in the order first aborted, methods apart, route labels escaped', async (t) => {
  const { createMetrics } = await import('../../src/http/metrics.js');
  const metrics = createMetrics();
  metrics.requestRecorder('GET /"q"', 'GET').aborted();
  metrics.requestRecorder('fallback', 'POST').aborted();
  metrics.requestRecorder('fallback', 'GET').aborted();
  metrics.requestRecorder('fallback', 'POST').aborted();
  const text = await metrics.text();
  t.same(
    text.split('\n').filter((line) => line.startsWith('http_requests_aborted_total{')),
    [
      'http_requests_aborted_total{route="GET /\\"q\\"",method="GET"} 1',
      'http_requests_aborted_total{route="fallback",method="POST"} 2',
      'http_requests_aborted_total{route="fallback",method="GET"} 1',
    ],
  );
  t.notMatch(text, /http_requests_total\{/, 'an abort is not an answer');
});

t.test('thousands of junk paths, methods and IDs add no series: /metrics stays the same size', async (t) => {
  const server = await startServer(t);
  const junk = (n: number) => `${n.toString(36)}-${Math.random().toString(36).slice(2)}`;
  const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
  const rawMethods = ['TRACE', 'CONNECT', 'PROPFIND', 'get', 'XJUNK'];
  const burst = async (from: number) => {
    const sent: Promise<unknown>[] = [];
    for (let n = from; n < from + 1000; n++) {
      const id = junk(n);
      const method = methods[n % methods.length];
      sent.push(
        server.request(method, `/${id}/${id}?${id}=${id}`),
        server.request(method, `/applications/app_${id}/users/${id}/data`),
        server.request(method, `/hub/auth/magic/${id}`),
      );
      if (n % 100 === 0) {
        for (const rawMethod of rawMethods) {
          sent.push(rawRequest(server.port, `${rawMethod} /${id} HTTP/1.1\r\nHost: x\r\n\r\n`, undefined, 2000).catch(() => undefined));
        }
      }
      if (sent.length >= 60) await Promise.all(sent.splice(0));
    }
    await Promise.all(sent);
    const { text } = await server.request('GET', '/metrics');
    return text.split('\n').filter((line) => line.startsWith('http_')).map((line) => line.replace(/ [^ ]+$/, ''));
  };
  await server.request('GET', '/metrics');
  const first = await burst(0);
  const second = await burst(1000);
  const series = (lines: string[]) => lines.filter((line) => !line.startsWith('http_request_duration_seconds_bucket')).sort();
  t.same(series(second), series(first), 'the same series, whatever the paths, IDs and methods sent');
  t.ok(first.length < 200, `a bounded number of lines (${first.length})`);
  t.notMatch(first.join('\n'), /app_|magic\/[^:]/, 'no path or ID in a label');
});

t.test('a request cut off for its framing (two lengths, a transfer coding) counts as aborted and logs its abort at debug', async (t) => {
  const logLines: string[] = [];
  const server = await startServer(t, { env: { SVC_LOG_LEVEL: 'debug' }, logDestination: { write: (line: string) => void logLines.push(line) } });
  const cutOff = (head: string) =>
    new Promise<string>((resolve) => {
      let text = '';
      const socket = connect(server.port, '127.0.0.1', () => socket.write(`${head}\r\n{}`));
      socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
      socket.on('close', () => resolve(text));
    });
  const twoLengths = 'Host: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 29\r\n';
  t.equal(await cutOff(`PUT /applications/${server.app.id}/users/user_1/data HTTP/1.1\r\n${twoLengths}`), '', 'no answer');
  t.equal(await cutOff(`POST /nowhere HTTP/1.1\r\n${twoLengths}`), '');
  t.equal(await cutOff('OPTIONS /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n'), '');
  const text = (await server.request('GET', '/metrics')).text;
  t.match(text, 'http_requests_aborted_total{route="PUT /applications/:app/users/:user/data",method="PUT"} 1');
  t.match(text, 'http_requests_aborted_total{route="fallback",method="POST"} 1');
  t.match(text, 'http_requests_aborted_total{route="OPTIONS *",method="OPTIONS"} 1');
  const aborted = logLines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'request aborted');
  t.same(
    aborted.map((entry) => entry.route),
    ['PUT /applications/:app/users/:user/data', 'fallback', 'OPTIONS *'],
    'each logged by its route',
  );
  t.ok(aborted.every((entry) => typeof entry.requestId === 'string'), 'with its request id');
});
