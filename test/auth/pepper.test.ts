import t from 'tap';
import { join } from 'node:path';
import { openStore } from '../../src/storage/store.js';
import { loadPepper } from '../../src/auth/pepper.js';
import { ApplicationStore } from '../../src/features/applications/store.js';
import { systemClock } from '../../src/lib/clock.js';
import { startServer } from '../helpers/server.js';

t.test('the pepper is made once, for a data dir without applications; a data dir with some but none is refused', async (t) => {
  const dir = t.testdir();
  const fresh = openStore(join(dir, 'fresh'));
  t.teardown(() => fresh.close());
  const made = await loadPepper(fresh);
  t.equal(made.length, 32);
  t.same(await loadPepper(fresh), made, 'then the same one is read back');

  const lost = openStore(join(dir, 'lost'));
  t.teardown(() => lost.close());
  await lost.commit(() => lost.db('apps').put('app_1', { id: 'app_1' }));
  await t.rejects(loadPepper(lost), /holds applications but no secret pepper/);
  t.equal(lost.db('meta').get('secret_pepper'), undefined, 'and no new one is written');
});

t.test('two processes opening a fresh data dir together share one pepper: a credential made by either works in a server started after', async (t) => {
  const dataDir = t.testdir();
  const store = openStore(dataDir);
  // A server's first start and a CLI command side by side: each reads "no pepper" before either has made one.
  const [first] = await Promise.all([loadPepper(store), loadPepper(store)]);
  const apps = new ApplicationStore(store, first, systemClock);
  const made = await apps.createCredential((await apps.create('Made by the first')).id);
  await store.close();

  const server = await startServer(t, { dataDir });
  const list = await server.request('GET', `/applications/${made.app_id}/users/data`, { app: { id: made.app_id, key: made.key, secret: made.secret } });
  t.equal(list.status, 200, `its secret is matched with the pepper it was stored under: ${JSON.stringify(list.body)}`);
});
