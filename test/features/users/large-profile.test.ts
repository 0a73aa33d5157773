import t from 'tap';
import { startServer } from '../../helpers/server.js';

t.test('a profile far larger than a page is stored and served whole, to the platform and to its user', async (t) => {
  const server = await startServer(t);
  const appId = server.app.id;
  const data: Record<string, string> = {};
  for (let i = 0; i < 8; i++) data[`field_${i}`] = String.fromCharCode(97 + i).repeat(60_000);
  const put = await server.request('PUT', `/applications/${appId}/users/big/data`, { app: server.app, body: { data } });
  t.equal(put.status, 200);
  const read = await server.request('GET', `/applications/${appId}/users/big/data`, { app: server.app });
  t.equal(read.status, 200);
  for (const [name, value] of Object.entries(data)) t.equal(read.body.data[name], value, name);
  const page = await server.request('GET', `/applications/${appId}/users/data`, { app: server.app });
  t.equal(page.body.results[0].data.field_7, data.field_7);
});

t.test('merges cannot grow a profile past 4 MiB of data and attributes', async (t) => {
  const server = await startServer(t);
  const path = `/applications/${server.app.id}/users/growing/data`;
  const chunk = (i: number) => Object.fromEntries(Array.from({ length: 14 }, (_, j) => [`f${i}_${j}`, 'x'.repeat(60_000)]));
  let refused;
  for (let i = 0; i < 10 && !refused; i++) {
    const res = await server.request('PATCH', path, { app: server.app, body: { data: chunk(i) } });
    if (res.status !== 200) refused = res;
  }
  t.equal(refused?.status, 400, 'a merge that would pass 4 MiB is refused');
  t.same(refused?.body.field_errors, { data: [`data and attributes may hold at most ${4 * 1024 * 1024} bytes as JSON`] });
  const read = await server.request('GET', path, { app: server.app });
  t.equal(read.status, 200, 'the profile stays readable');
  t.ok(Buffer.byteLength(JSON.stringify(read.body.data)) <= 4 * 1024 * 1024);
});

t.test('the default body caps (ADDENDUM §8): a JSON body of 1 MiB and a multipart one of 10 MiB are read, a byte more is 413', async (t) => {
  const server = await startServer(t);
  const path = `/applications/${server.app.id}/users/capped/data`;
  /** A body of exactly `size` bytes: `head`, padding, `tail`. */
  const sized = (size: number, head: string, tail: string) => `${head}${'x'.repeat(size - head.length - tail.length)}${tail}`;
  const kinds: Array<[string, number, string, string, string]> = [
    ['JSON', 1024 * 1024, 'application/json', '{"data":{"pad":"', '"}}'],
    ['multipart', 10 * 1024 * 1024, 'multipart/form-data; boundary=b', '--b\r\nContent-Disposition: form-data; name="data"\r\n\r\n{"pad":"', '"}\r\n--b--\r\n'],
  ];
  for (const [kind, cap, type, head, tail] of kinds) {
    const send = (size: number) => server.request('PUT', path, { app: server.app, rawBody: sized(size, head, tail), headers: { 'content-type': type } });
    const atCap = await send(cap);
    t.equal(atCap.status, 400, `${kind}: ${cap} bytes are read`);
    t.equal(atCap.body.code, 'E_USER_UPDATE_FAILED', `${kind}: and refused for the value past 64 KiB, not for the body's size`);
    const over = await send(cap + 1);
    t.equal(over.status, 413, `${kind}: ${cap + 1} bytes are too many`);
    t.equal(over.body.code, 'E_PAYLOAD_TOO_LARGE');
  }
  t.equal(server.deps.users.count(server.app.id), 0, 'nothing was made');
});
