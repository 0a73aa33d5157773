import t from 'tap';
import { join } from 'node:path';
import { openStore } from '../../src/storage/store.js';
import { loadPepper } from '../../src/auth/pepper.js';

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
