import t from 'tap';
import { openStore } from '../../../src/storage/store.js';
import { ApplicationStore } from '../../../src/features/applications/store.js';
import { manualClock } from '../../../src/lib/clock.js';

const pepper = Buffer.alloc(32, 7);

t.test('get answers the same frozen record until its stored bytes change', async (t) => {
  const store = openStore(t.testdir());
  t.teardown(() => store.close());
  const clock = manualClock();
  const apps = new ApplicationStore(store, pepper, clock);
  // A second store on the same environment stands in for the CLI changing the record.
  const cli = new ApplicationStore(store, pepper, clock);
  const created = await apps.create('Shop');

  const first = apps.get(created.id)!;
  t.same(first, created);
  t.ok(Object.isFrozen(first) && Object.isFrozen(first.schema), 'the shared record is frozen deep');
  t.equal(apps.get(created.id), first, 'unchanged bytes answer the cached record');

  clock.advance(1000);
  await cli.update(created.id, { name: 'Shop 2' });
  const renamed = apps.get(created.id)!;
  t.not(renamed, first);
  t.equal(renamed.name, 'Shop 2', 'a change made elsewhere shows at once');
  t.equal(renamed.updated_at, '2026-01-01T00:00:01.000Z');
  t.equal(apps.get(created.id), renamed);

  await store.commit(() => store.db('apps').remove(created.id));
  t.equal(apps.get(created.id), undefined, 'a removed record is gone at once');
});
