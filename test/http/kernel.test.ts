import t from 'tap';
import pino from 'pino';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { createHttpServer } from '../../src/http/server.js';
import { ok } from '../../src/http/reply.js';
import type { Route } from '../../src/http/route.js';
import { ApiError } from '../../src/lib/errors.js';

const routes: Route[] = [
  { method: 'POST', path: '/echo', handle: (ctx) => ok({ body: ctx.body }) },
  { method: 'PUT', path: '/upload', body: ['json', 'multipart'], handle: (ctx) => ok({ body: ctx.body }) },
  { method: 'GET', path: '/items/:id', query: 'parsed', handle: (ctx) => ok({ id: ctx.params.id, q: ctx.query().get('q') }) },
  {
    method: 'GET',
    path: '/boom',
    handle: () => {
      throw new Error('secret internals');
    },
  },
  {
    method: 'GET',
    path: '/slow',
    handle: async () => {
      await new Promise((r) => setTimeout(r, 50));
      return ok({ slow: true });
    },
  },
  { method: 'GET', path: '/plain', handle: () => ok({ plain: true }) },
  {
    method: 'GET',
    path: '/headers',
    handle: (ctx) =>
      ok({
        headers: {
          'x-forwarded-for': ctx.header('x-forwarded-for'),
          accept: ctx.header('accept'),
          missing: ctx.header('x-missing') ?? null,
          ctor: ctx.header('constructor') ?? null,
        },
      }),
  },
  { method: 'GET', path: '/spend/:id', query: 'ignored', changesState: true, handle: (ctx) => ok({ spent: ctx.params.id }) },
  {
    method: 'GET',
    path: '/teapot',
    handle: () => {
      throw new ApiError(409, 'E_TEST', 'conflicting');
    },
  },
];

const server = createHttpServer({
  routes,
  limits: { json: 1024, multipart: 4096 },
  logger: pino({ level: 'silent' }),
  corsOrigins: ['https://app.example'],
  corsHeaders: ['x-svc-app-key'],
});
const port = await server.listen('127.0.0.1', 0);
const url = `http://127.0.0.1:${port}`;
t.teardown(async () => {
  await server.drain();
  server.close();
});

const expectErrorBody = (t: { equal: Function; type: Function; ok: Function }, body: any, status: number, code: string) => {
  t.equal(body.statusCode, status);
  t.equal(body.code, code);
  t.type(body.error, 'string');
  t.type(body.message, 'string');
  t.ok(Array.isArray(body.messages) && body.messages.length >= 1, 'messages holds at least the message');
};

t.test('JSON body is parsed and path params and query are copied', async (t) => {
  const res = await fetch(`${url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
  t.equal(res.status, 200);
  t.same(await res.json(), { body: { kind: 'json', value: { a: 1 } } });
  t.equal(res.headers.get('x-content-type-options'), 'nosniff');
  t.equal(res.headers.get('uwebsockets'), null, 'no framework banner');
  t.match(res.headers.get('x-request-id'), /\S+/);
  const item = await fetch(`${url}/items/a%20b?q=x`);
  t.same(await item.json(), { id: 'a b', q: 'x' });
});

t.test('bad JSON answers 400 E_BAD_JSON', async (t) => {
  const res = await fetch(`${url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' });
  t.equal(res.status, 400);
  expectErrorBody(t, await res.json(), 400, 'E_BAD_JSON');
});

t.test('a bad JSON body is not quoted back: it may hold a secret', async (t) => {
  const res = await fetch(`${url}/echo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"secret": sk9Xq2Lm7Pw4Rt8Zv}',
  });
  const body = (await res.json()) as any;
  expectErrorBody(t, body, 400, 'E_BAD_JSON');
  t.equal(body.message, "The body cannot be read as JSON: Unexpected token 's' in JSON");
  t.notMatch(JSON.stringify(body), /sk9Xq2|secret/, 'no part of the body is in the answer');
});

t.test('an unsupported content type answers 415', async (t) => {
  const res = await fetch(`${url}/echo`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hi' });
  t.equal(res.status, 415);
  expectErrorBody(t, await res.json(), 415, 'E_UNSUPPORTED_MEDIA_TYPE');
});

t.test('a body in a content coding is 415, never read as if it were plain', async (t) => {
  const post = (encoding: string, body: BodyInit) =>
    fetch(`${url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': encoding }, body });
  for (const [encoding, body] of [['gzip', gzipSync('{"a":1}')], ['gzip', '{"a":1}'], ['br, gzip', '{}']] as const) {
    const res = await post(encoding, body);
    t.equal(res.status, 415, encoding);
    expectErrorBody(t, await res.json(), 415, 'E_UNSUPPORTED_MEDIA_TYPE');
  }
  t.equal((await post('identity', '{"a":1}')).status, 200, 'identity is no coding');
});

t.test('multipart is refused where the route takes JSON only, parsed where it takes both', async (t) => {
  const form = new FormData();
  form.append('value', 'hello');
  form.append('file', new Blob([Buffer.from([1, 2, 3])], { type: 'image/png' }), 'a.png');
  const refused = await fetch(`${url}/echo`, { method: 'POST', body: form });
  t.equal(refused.status, 415);
  const accepted = await fetch(`${url}/upload`, { method: 'PUT', body: form });
  t.equal(accepted.status, 200);
  const { body } = (await accepted.json()) as any;
  t.equal(body.kind, 'multipart');
  t.same(body.fields, { value: 'hello' });
  t.equal(body.files.file.contentType, 'image/png');
  t.equal(body.files.file.filename, 'a.png');
});

t.test('JSON must be UTF-8 and nest at most 64 levels: 400, whatever the route does with it', async (t) => {
  const post = (body: BodyInit) => fetch(`${url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const deepest = await post('['.repeat(64) + ']'.repeat(64));
  t.equal(deepest.status, 200, '64 levels pass');
  const tooDeep = await post(`{"a":${'['.repeat(64)}${']'.repeat(64)}}`);
  t.equal(tooDeep.status, 400);
  const body = (await tooDeep.json()) as any;
  expectErrorBody(t, body, 400, 'E_BAD_JSON');
  t.match(body.message, /nest at most 64 levels/);
  // Far deeper than any stack: refused just the same, not a 500.
  t.equal((await post('['.repeat(500) + ']'.repeat(500))).status, 400);
  const latin1 = await post(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]));
  t.equal(latin1.status, 400);
  t.match(((await latin1.json()) as any).message, /not UTF-8/);
});

t.test('a JSON number past the range of a double is 400 E_BAD_JSON: it would read as Infinity and be kept as null', async (t) => {
  const post = (body: string) => fetch(`${url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  for (const body of ['{"a":1e400}', '{"a":[[-1e309]]}', '1e400']) {
    const res = await post(body);
    t.equal(res.status, 400, body);
    const error = (await res.json()) as any;
    expectErrorBody(t, error, 400, 'E_BAD_JSON');
    t.match(error.message, /beyond the range of a double/, body);
  }
  const largest = await post('{"a":1.7976931348623157e308,"b":1e-400}');
  t.same(((await largest.json()) as any).body.value, { a: 1.7976931348623157e308, b: 0 }, 'the largest double passes; an underflow is rounded like any other digit');
});

t.test('a multipart body must arrive whole, name every part once, and carry UTF-8 text', async (t) => {
  const put = (body: string | Uint8Array) =>
    fetch(`${url}/upload`, { method: 'PUT', headers: { 'content-type': 'multipart/form-data; boundary=XX' }, body: body as BodyInit });
  const part = (name: string, value: string) => `--XX\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const whole = await put(`${part('a', '1')}--XX--\r\n`);
  t.equal(whole.status, 200);
  t.same(((await whole.json()) as any).body.fields, { a: '1' });
  for (const [label, body] of [
    ['garbage', 'garbage'],
    ['cut short', part('a', '1')],
    ['a part without a name', '--XX\r\nContent-Disposition: form-data\r\n\r\nx\r\n--XX--\r\n'],
    ['a part without headers', `${part('a', '1')}--XX\r\nfoo\r\n--XX--\r\n`],
    // RFC 2046 lets a line hold it past its start; uWebSockets.js's parser does not (docs/API.md).
    ['a part holding the boundary inside a line', `${part('a', 'x--XX y')}--XX--\r\n`],
  ] as const) {
    const res = await put(body);
    t.equal(res.status, 400, label);
    expectErrorBody(t, await res.json(), 400, 'E_VALIDATION');
  }
  const twice = await put(`${part('a', '1')}${part('a', '2')}--XX--\r\n`);
  t.equal(twice.status, 400);
  t.same(((await twice.json()) as any).field_errors, { a: ['given more than once'] });
  const notUtf8 = await put(Buffer.concat([Buffer.from('--XX\r\nContent-Disposition: form-data; name="a"\r\n\r\n'), Buffer.from([0xff]), Buffer.from('\r\n--XX--\r\n')]));
  t.equal(notUtf8.status, 400);
  t.same(((await notUtf8.json()) as any).field_errors, { a: ['text parts are UTF-8'] });
  const noBoundary = await fetch(`${url}/upload`, { method: 'PUT', headers: { 'content-type': 'multipart/form-data' }, body: 'x' });
  t.equal(noBoundary.status, 400);
});

t.test('a multipart boundary is read as RFC 2045 writes parameters: quoted, among others, in any case', async (t) => {
  const body = '--XX\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--XX--\r\n';
  for (const contentType of [
    'multipart/form-data; boundary="XX"',
    'multipart/form-data; boundary=XX; charset=utf-8',
    'multipart/form-data; charset=utf-8; boundary=XX',
    'Multipart/Form-Data; Boundary=XX',
  ]) {
    const res = await fetch(`${url}/upload`, { method: 'PUT', headers: { 'content-type': contentType }, body });
    t.equal(res.status, 200, contentType);
    t.same(((await res.json()) as any).body?.fields, { a: '1' }, contentType);
  }
});

t.test('a multipart part typed text/plain with parameters, or in any case, is a text part', async (t) => {
  for (const partType of ['text/plain; charset=utf-8', 'Text/Plain']) {
    const body = `--XX\r\nContent-Disposition: form-data; name="a"\r\nContent-Type: ${partType}\r\n\r\n1\r\n--XX--\r\n`;
    const res = await fetch(`${url}/upload`, { method: 'PUT', headers: { 'content-type': 'multipart/form-data; boundary=XX' }, body });
    t.equal(res.status, 200, partType);
    t.same(((await res.json()) as any).body, { kind: 'multipart', fields: { a: '1' }, files: {} }, partType);
  }
});

t.test('an oversize body answers 413 and the server stays healthy', async (t) => {
  const declared = await fetch(`${url}/echo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ pad: 'x'.repeat(5000) }),
  });
  t.equal(declared.status, 413);
  expectErrorBody(t, await declared.json(), 413, 'E_PAYLOAD_TOO_LARGE');
  // A chunked body declares no length: it is refused while streaming.
  const stream = new ReadableStream({
    start(controller) {
      for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(500)));
      controller.close();
    },
  });
  const chunked = await fetch(`${url}/echo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: stream,
    duplex: 'half',
  } as RequestInit);
  t.equal(chunked.status, 413);
  const after = await fetch(`${url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  t.equal(after.status, 200);
});

t.test('a multipart body gets the multipart cap only where the route takes multipart', async (t) => {
  const body = `--b\r\nContent-Disposition: form-data; name="pad"\r\n\r\n${'x'.repeat(2000)}\r\n--b--\r\n`;
  const headers = { 'content-type': 'multipart/form-data; boundary=b' };
  t.equal((await fetch(`${url}/upload`, { method: 'PUT', headers, body })).status, 200, 'under the multipart cap');
  t.equal((await fetch(`${url}/echo`, { method: 'POST', headers, body })).status, 413, 'over the JSON cap of a JSON route: not read');
});

t.test('unknown route answers 404, wrong method 405 with Allow', async (t) => {
  const missing = await fetch(`${url}/nowhere`);
  t.equal(missing.status, 404);
  expectErrorBody(t, await missing.json(), 404, 'E_NOT_FOUND');
  t.equal((await fetch(`${url}/items/1/`)).status, 404, 'a trailing slash names no route');
  t.equal((await fetch(`${url}/items/1/`, { method: 'DELETE' })).status, 404, 'nor one whose methods it could list');
  const wrong = await fetch(`${url}/items/1`, { method: 'DELETE' });
  t.equal(wrong.status, 405);
  t.equal(wrong.headers.get('allow'), 'GET, HEAD');
  expectErrorBody(t, await wrong.json(), 405, 'E_METHOD_NOT_ALLOWED');
});

t.test('an unexpected error answers a bland 500 without internals', async (t) => {
  const res = await fetch(`${url}/boom`);
  t.equal(res.status, 500);
  const text = await res.text();
  t.notMatch(text, /secret internals/);
  expectErrorBody(t, JSON.parse(text), 500, 'E_INTERNAL');
  t.equal(JSON.parse(text).error, 'Internal Server Error', 'error is the reason phrase (ADDENDUM §7), as the fuzz tests check for the other statuses');
});

t.test('coded errors keep their status and code; async handlers answer', async (t) => {
  const res = await fetch(`${url}/teapot`);
  t.equal(res.status, 409);
  expectErrorBody(t, await res.json(), 409, 'E_TEST');
  const slow = await fetch(`${url}/slow`);
  t.same(await slow.json(), { slow: true });
});

t.test('CORS: allowed origins are echoed and preflight is answered', async (t) => {
  const res = await fetch(`${url}/items/1`, { headers: { origin: 'https://app.example' } });
  t.equal(res.headers.get('access-control-allow-origin'), 'https://app.example');
  const other = await fetch(`${url}/items/1`, { headers: { origin: 'https://evil.example' } });
  t.equal(other.headers.get('access-control-allow-origin'), null);
  const preflight = await fetch(`${url}/items/1`, {
    method: 'OPTIONS',
    headers: { origin: 'https://app.example', 'access-control-request-method': 'PUT' },
  });
  t.equal(preflight.status, 204);
  t.match(preflight.headers.get('access-control-allow-headers'), /x-svc-app-key/);
});

t.test('malformed percent-encoding in a path parameter answers 400', async (t) => {
  const res = await fetch(`${url}/items/%E0%A4%A`);
  t.equal(res.status, 400);
  expectErrorBody(t, await res.json(), 400, 'E_VALIDATION');
});

t.test('malformed percent-encoding in a query answers 400, as in a path, where the route reads its query', async (t) => {
  for (const query of ['q=a%zz', 'q=100%', 'q=%E0%A4%A', 'q=%FF', 'q=%ED%A0%80', '%zz=1']) {
    const res = await fetch(`${url}/items/1?${query}`);
    t.equal(res.status, 400, query);
    const body = await res.json();
    expectErrorBody(t, body, 400, 'E_VALIDATION');
    t.same(body.field_errors, { query: ['malformed percent-encoding (a % must start an escape of UTF-8)'] });
  }
  const fine = await fetch(`${url}/items/1?q=${encodeURIComponent('50% off, é')}+now`);
  t.same(await fine.json(), { id: '1', q: '50% off, é now' }, 'escapes of UTF-8 and + for a space read as ever');
  t.equal((await fetch(`${url}/spend/1?utm=%zz`)).status, 200, 'a route that ignores its query ignores this too');
});

/** Sends `bytes` on a fresh connection; resolves with everything answered until the server closes it (or `waitMs` passes). */
function exchange(bytes: string, waitMs = 500): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let text = '';
    let closed = false;
    socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
    socket.on('close', () => {
      closed = true;
      clearTimeout(timer);
      resolve({ text, closed });
    });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed });
    }, waitMs);
  });
}

t.test('a body past the cap is answered 413 as soon as that is known, and the connection closed: the rest is never waited for', async (t) => {
  const head = 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n';
  // 100 MB declared, 5 bytes sent: a server that waited for the rest would answer nothing within the wait.
  const declared = await exchange(`${head}Content-Length: 100000000\r\n\r\n{"a":`);
  t.match(declared.text, /^HTTP\/1\.1 413 /);
  t.match(declared.text, /"code":"E_PAYLOAD_TOO_LARGE"/);
  t.ok(declared.closed, 'declared: the connection is closed');
  // Chunks past the 1 024-byte cap, and no last chunk: refused mid-stream.
  const chunked = await exchange(`${head}Transfer-Encoding: chunked\r\n\r\n500\r\n${'x'.repeat(0x500)}\r\n`);
  t.match(chunked.text, /^HTTP\/1\.1 413 /);
  t.match(chunked.text, /"code":"E_PAYLOAD_TOO_LARGE"/);
  t.ok(chunked.closed, 'chunked: the connection is closed');
});

t.test('a refusal answered before the body is read closes the connection when the body is chunked or declared past the cap, not waiting for it', async (t) => {
  const json = 'Content-Type: application/json\r\n';
  for (const [label, request] of [
    ['a content coding (415)', `POST /echo HTTP/1.1\r\nHost: x\r\n${json}Content-Encoding: gzip\r\n`],
    ['a repeated header (400)', `POST /echo HTTP/1.1\r\nHost: x\r\n${json}${json}`],
    ['malformed path encoding (400)', `GET /items/%zz HTTP/1.1\r\nHost: x\r\n${json}`],
    ['no route (404)', `POST /nowhere HTTP/1.1\r\nHost: x\r\n${json}`],
    ['a method the path does not take (405)', `POST /items/1 HTTP/1.1\r\nHost: x\r\n${json}`],
  ]) {
    for (const [framing, body] of [
      ['declared past the cap', 'Content-Length: 100000000\r\n\r\n{"a":'],
      ['chunked', 'Transfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\n'],
    ]) {
      const res = await exchange(request + body);
      t.match(res.text, /^HTTP\/1\.1 4\d\d [\s\S]*"statusCode":4\d\d/, `${label}, ${framing}: answered in ADDENDUM §7's shape`);
      t.ok(res.closed, `${label}, ${framing}: the connection is closed`);
    }
  }
  const within = await exchange(`POST /nowhere HTTP/1.1\r\nHost: x\r\n${json}Content-Length: 2\r\n\r\n{}GET /items/1 HTTP/1.1\r\nHost: x\r\n\r\n`);
  t.equal(within.text.match(/HTTP\/1\.1 (404|200) /g)?.length, 2, 'a body declared within the cap is read past, and the connection serves on');
});

t.test('a request framed two ways is cut off unanswered, so nothing after it is read as a request', async (t) => {
  for (const [label, headers] of [
    ['two lengths', 'Content-Length: 2\r\nContent-Length: 29'],
    ['a length and chunks', 'Content-Length: 2\r\nTransfer-Encoding: chunked'],
  ]) {
    for (const path of ['/echo', '/nowhere']) {
      const res = await exchange(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${headers}\r\n\r\n{}GET /items/1 HTTP/1.1\r\nHost: x\r\n\r\n`);
      t.equal(res.text, '', `${label}, ${path}: no answer`);
      t.ok(res.closed, `${label}, ${path}: the connection is closed`);
    }
  }
  t.equal((await fetch(`${url}/items/1`)).status, 200, 'the server serves on');
});

t.test('uWS cuts off unanswered a content-length other than 1 to 9 digits, so checkDeclaredLength only ever reads digits', async (t) => {
  const next = 'GET /items/1 HTTP/1.1\r\nHost: x\r\n\r\n';
  const post = (length: string) => exchange(`POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n{}${next}`);
  // What Number() would read as a length (16, 1000, 5, 2), a sign, a fraction, a list, a 10th digit.
  for (const length of ['0x10', '1e3', '+5', '2.0', '-2', '2,2', '', '0000000002', '1000000000', '4294967296']) {
    const res = await post(length);
    t.equal(res.text, '', `${JSON.stringify(length)}: no answer`);
    t.ok(res.closed, `${JSON.stringify(length)}: the connection is closed`);
  }
  for (const length of [' 2 ', '\t2', '02']) {
    const res = await post(length);
    t.equal(res.text.match(/HTTP\/1\.1 200 /g)?.length, 2, `${JSON.stringify(length)}: read as 2 (whitespace around a field value is not part of it)`);
  }
  t.match((await post('999999999')).text, /^HTTP\/1\.1 413 /, 'nine digits reach the app, whose cap refuses them');
});

t.test('a request with a transfer coding other than chunked alone is cut off unanswered: uWS would read its body as chunks', async (t) => {
  const chunks = '2\r\n{}\r\n0\r\n\r\n';
  const next = 'GET /items/1 HTTP/1.1\r\nHost: x\r\n\r\n';
  // A proxy may frame these otherwise, or refuse them, and take what follows for a body.
  for (const coding of ['gzip', 'identity', 'gzip, chunked', 'gzip\r\nTransfer-Encoding: chunked']) {
    const res = await exchange(`POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: ${coding}\r\n\r\n${chunks}${next}`);
    t.equal(res.text, '', `${coding}: no answer`);
    t.ok(res.closed, `${coding}: the connection is closed`);
  }
  const chunked = await exchange(`POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: Chunked\r\n\r\n${chunks}${next}`);
  t.equal(chunked.text.match(/HTTP\/1\.1 200 /g)?.length, 2, 'chunks, in any letter case, are read, and so is the request after them');
});

t.test('a host or credential header given twice is 400, other headers may repeat', async (t) => {
  for (const header of ['Host: y', 'x-svc-app-key: k2', 'Authorization: Bearer b']) {
    const res = await exchange(`GET /items/1 HTTP/1.1\r\nHost: x\r\nx-svc-app-key: k\r\nAuthorization: Bearer a\r\n${header}\r\nConnection: close\r\n\r\n`);
    t.match(res.text, /^HTTP\/1\.1 400 /, header);
    t.match(res.text, /given more than once/);
  }
  const harmless = await exchange('GET /items/1 HTTP/1.1\r\nHost: x\r\nAccept: a\r\nAccept: b\r\nConnection: close\r\n\r\n');
  t.match(harmless.text, /^HTTP\/1\.1 200 /);
});

t.test('a header given on several lines reads as one list, its lines in order (RFC 9110 §5.3)', async (t) => {
  const res = await exchange(
    'GET /headers HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 198.51.100.9\r\nAccept: a\r\nX-Forwarded-For: 203.0.113.5, 10.0.0.2\r\nConnection: close\r\n\r\n',
  );
  const headers = JSON.parse(res.text.slice(res.text.indexOf('\r\n\r\n') + 4)).headers;
  t.equal(headers['x-forwarded-for'], '198.51.100.9, 203.0.113.5, 10.0.0.2', 'a proxy\'s line after the client\'s');
  t.equal(headers.accept, 'a');
  t.equal(headers.missing, null, 'a header not given reads as absent');
  const named = await exchange('GET /headers HTTP/1.1\r\nHost: x\r\nconstructor: b\r\nConnection: close\r\n\r\n');
  const echoed = JSON.parse(named.text.slice(named.text.indexOf('\r\n\r\n') + 4)).headers;
  t.equal(echoed.ctor, 'b', 'a header named like an Object.prototype member reads as any other');
  t.equal((JSON.parse((await exchange('GET /headers HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).text.split('\r\n\r\n')[1]).headers.ctor), null, 'and are absent when not given');
  const origins = await exchange('GET /items/1 HTTP/1.1\r\nHost: x\r\nOrigin: https://evil.example\r\nOrigin: https://app.example\r\nConnection: close\r\n\r\n');
  t.match(origins.text, /^HTTP\/1\.1 200 /);
  t.notMatch(origins.text, /access-control-allow-origin/i, 'Origin on two lines names no origin: nothing is echoed');
});

t.test('HEAD answers what GET would, without the body, and ends the connection; a route without GET answers its error without a body', async (t) => {
  const head = await exchange('HEAD /items/7 HTTP/1.1\r\nHost: x\r\n\r\n');
  t.match(head.text, /^HTTP\/1\.1 200 /);
  const length = (await (await fetch(`${url}/items/7`)).arrayBuffer()).byteLength;
  t.match(head.text, new RegExp(`Content-Length: ${length}\r\n`), 'the length GET would send');
  t.match(head.text, /Connection: close\r\n/, 'uWS reads nothing more after a HEAD answer: the client is told not to reuse the connection');
  t.ok(head.text.endsWith('\r\n\r\n'), 'no body');
  const missing = await exchange('HEAD /nowhere HTTP/1.1\r\nHost: x\r\n\r\n');
  t.match(missing.text, /^HTTP\/1\.1 404 [\s\S]*\r\n\r\n$/);
  const wrong = await exchange('HEAD /echo HTTP/1.1\r\nHost: x\r\n\r\n');
  t.match(wrong.text, /^HTTP\/1\.1 405 [\s\S]*\r\n\r\n$/, 'no body after a 405 either');
  const allow = await fetch(`${url}/items/1`, { method: 'DELETE' });
  t.equal(allow.headers.get('allow'), 'GET, HEAD');
});

t.test('a route takes a query only if it says so: otherwise 400, or ignored where it is declared so', async (t) => {
  t.equal((await fetch(`${url}/plain`)).status, 200);
  const refused = await fetch(`${url}/plain?dry_run=true`);
  t.equal(refused.status, 400);
  t.same((await refused.json()).field_errors, { dry_run: ['is not a known field'] });
  t.equal((await fetch(`${url}/items/1?q=x`)).status, 200, 'a route that parses its query');
  t.equal((await fetch(`${url}/spend/1?utm_source=mail`)).status, 200, 'a route that ignores it');
});

t.test('a GET that changes state has no HEAD: 405, allowing GET alone, and the handler does not run', async (t) => {
  const head = await exchange('HEAD /spend/1 HTTP/1.1\r\nHost: x\r\n\r\n');
  t.match(head.text, /^HTTP\/1\.1 405 /);
  t.match(head.text, /\r\nallow: GET\r\n/i);
  t.notMatch(head.text, /spent/);
});
