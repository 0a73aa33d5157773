import t from 'tap';
import { startServer } from '../helpers/server.js';

t.test('a JSON object naming a key twice is refused (400), whichever copy a reader would keep, and changes nothing', async (t) => {
  const server = await startServer(t);
  const { app } = server;
  const user = `/applications/${app.id}/users/ada`;
  const send = (method: string, path: string, json: string) =>
    server.request(method, path, { app, rawBody: json, headers: { 'content-type': 'application/json' } });
  t.equal((await send('PUT', `${user}/data`, '{"data":{"email":"ada@example.com"}}')).status, 200);
  const stored = async () => (await server.request('GET', `${user}/data`, { app })).body;
  const before = await stored();

  for (const [method, path, json] of [
    ['POST', `${user}/state`, '{"state":"disabled","state":"enabled"}'],
    ['POST', `${user}/state`, '{"state":"enabled", "state" :"disabled"}'],
    ['PUT', `${user}/data`, '{"data":{"email":"eve@example.com","email":"ada@example.com"}}'],
    ['PATCH', `${user}/data`, '{"data":{"first_name":"A","\\u0066irst_name":"B"}}'],
    ['PATCH', `${user}/data`, '{"attributes":{"x:y":["1"]},"data":{},"attributes":{}}'],
    ['POST', `/applications/${app.id}/users/ada/signout`, '{"sign_out_all":false,"sign_out_all":true}'],
  ]) {
    const res = await send(method, path, json);
    t.equal(res.status, 400, `${method} ${json}`);
    t.equal(res.body.code, 'E_BAD_JSON');
    t.match(res.body.message, /names a key more than once/);
  }
  t.same(await stored(), before, 'nothing changed');

  const multipart = new FormData();
  multipart.append('data', '{"first_name":"A","first_name":"B"}');
  const part = await server.request('PATCH', `${user}/data`, { app, rawBody: multipart });
  t.equal(part.status, 400, 'in a multipart data part too');
  t.same(await stored(), before);

  const fine = await send('PATCH', `${user}/data`, '{"data":{"a":{"k":1},"b":{"k":2},"note":"\\"a\\": 1, \\"a\\": 2","list":[{"k":1},{"k":2}]}}');
  t.equal(fine.status, 200, 'the same key in two objects, and keys written inside a string, are no repeat');
  t.same(fine.body.data.note, '"a": 1, "a": 2');
});
