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
