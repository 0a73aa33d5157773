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

t.test('the first application is made only while there is none: an app made meanwhile (the CLI) means no default', async (t) => {
  const store = openStore(t.testdir());
  t.teardown(() => store.close());
  const clock = manualClock();
  const server = new ApplicationStore(store, pepper, clock);
  t.ok(server.isEmpty(), 'the server looked: no application yet');
  // A CLI `app create` that lands after the server looked.
  await new ApplicationStore(store, pepper, clock).create('Shop');
  t.equal(await server.createFirst('default'), undefined, 'nothing made');
  t.same([...store.db('apps').getRange({})].map(({ value }) => (value as { name: string }).name), ['Shop']);

  const fresh = openStore(t.testdir());
  t.teardown(() => fresh.close());
  const empty = new ApplicationStore(fresh, pepper, clock);
  const made = await empty.createFirst('default');
  t.equal(made?.app.name, 'default');
  t.same(empty.listCredentials(made!.app.id).map((c) => c.key), [made!.credential.key], 'with its credential, in the same commit');
});
