import t from 'tap';
import { startServer } from '../helpers/server.js';
import { rawRequest } from '../helpers/raw-http.js';
import { unavailable } from '../../src/lib/errors.js';
import type { Route } from '../../src/http/route.js';

const failing = (): Route[] => [
  {
    method: 'GET',
    path: '/test/boom/:id',
    handle: () => {
      throw new Error('a bug deep inside');
    },
  },
  {
    method: 'GET',
    path: '/test/busy',
    handle: async () => {
      throw unavailable('The change could not be stored; try again');
    },
  },
];

async function serverLogging(t: Parameters<typeof startServer>[0], level: string) {
  const lines: string[] = [];
  const server = await startServer(t, { env: { SVC_LOG_LEVEL: level }, extraRoutes: failing, logDestination: { write: (line: string) => void lines.push(line) } });
  return { server, entries: () => lines.map((line) => JSON.parse(line) as Record<string, any>) };
}

t.test('a 500 is logged at error with its route and the request id its client was given, and answered without internals', async (t) => {
  const { server, entries } = await serverLogging(t, 'info');
  const res = await server.request('GET', '/test/boom/link-id-kept-out');
  t.equal(res.status, 500);
  t.notMatch(res.text, 'a bug deep inside');
  const requestId = res.headers.get('x-request-id');
  t.ok(requestId);
  const logged = entries().filter((entry) => entry.msg === 'unhandled error');
  t.equal(logged.length, 1);
  t.equal(logged[0].level, 50, 'at error');
  t.equal(logged[0].requestId, requestId, 'the id the client saw in x-request-id');
  t.equal(logged[0].route, 'GET /test/boom/:id', 'the route pattern');
  t.equal(logged[0].err.message, 'a bug deep inside', 'with the error');
  t.notMatch(JSON.stringify(entries()), 'link-id-kept-out', 'never the path');

  const busy = await server.request('GET', '/test/busy');
  t.equal(busy.status, 503);
  const warned = entries().filter((entry) => entry.requestId === busy.headers.get('x-request-id'));
  t.same(
    warned.map(({ level, route, code }) => ({ level, route, code })),
    [{ level: 40, route: 'GET /test/busy', code: 'E_UNAVAILABLE' }],
    'a 503 at warn, with its route and code',
  );
});

t.test('request lines are logged at debug (not at info), each with the request id its client was given', async (t) => {
  const quiet = await serverLogging(t, 'info');
  await quiet.server.request('GET', '/health');
  t.same(quiet.entries().filter((entry) => entry.requestId), [], 'no request lines at info');

  const { server, entries } = await serverLogging(t, 'debug');
  const health = await server.request('GET', '/health');
  const fallback = await server.request('GET', '/nowhere');
  const byId = (res: typeof health) => entries().filter((entry) => entry.requestId === res.headers.get('x-request-id'));
  t.match(byId(health), [
    { level: 20, msg: 'request started', route: 'GET /health' },
    { level: 20, msg: 'request', route: 'GET /health', status: 200, ms: Number },
  ]);
  t.match(byId(fallback), [{ level: 20, msg: 'request', route: 'fallback', status: 404 }], 'a request no route takes logs only its answer');
  t.equal(byId(fallback).length, 1);
});

t.test('hostile paths, queries, methods and headers cannot forge or bloat a log line', async (t) => {
  const lines: string[] = [];
  const server = await startServer(t, { env: { SVC_LOG_LEVEL: 'trace' }, logDestination: { write: (line: string) => void lines.push(line) } });
  const forged = '{"level":50,"msg":"forged"}';
  const huge = 'x'.repeat(8000);
  const heads = [
    `GET /nowhere%0a${encodeURIComponent(forged)}?q=%0d%0a${encodeURIComponent(forged)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    `GET /applications/a%0a${encodeURIComponent(forged)}/users/${huge}/data?${huge} HTTP/1.1\r\nHost: x\r\nx-request-id: ${forged}\r\n\r\n`,
    `GET /hub/auth/magic/${huge} HTTP/1.1\r\nHost: x\r\nUser-Agent: ${huge}\r\nReferer: \u0085${forged}\r\n\r\n`,
    `POST /me/groups HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${huge}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
    `TRACE /${huge} HTTP/1.1\r\nHost: x\r\n\r\n`,
  ];
  for (const head of heads) t.ok((await rawRequest(server.port, head)).status >= 400, head.slice(0, 40));
  await server.close();
  const logged = lines.join('').split('\n').filter(Boolean);
  t.ok(logged.length >= heads.length * 2 - 2, 'the requests were logged');
  for (const line of logged) {
    const entry = JSON.parse(line);
    t.not(entry.msg, 'forged', 'each line is one entry of the service');
    t.ok(line.length < 1000, `a short line (${line.length})`);
  }
});
