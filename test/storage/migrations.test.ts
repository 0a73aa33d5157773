import t from 'tap';
import pino from 'pino';
import { openStore } from '../../src/storage/store.js';
import { FORMAT_VERSION, migrate, storedFormatVersion } from '../../src/storage/migrations.js';
import { loadConfig } from '../../src/config.js';
import { openServices } from '../../src/services.js';

const logger = pino({ level: 'silent' });

t.test('a fresh data dir is stamped with the current format', async (t) => {
  const store = openStore(t.testdir());
  t.teardown(() => store.close());
  t.equal(storedFormatVersion(store), undefined);
  t.equal(await migrate(store, logger), FORMAT_VERSION);
  t.equal(storedFormatVersion(store), FORMAT_VERSION);
  t.equal(await migrate(store, logger), FORMAT_VERSION, 'a second start changes nothing');
});

t.test('an older format is moved forward step by step, each step with its version in one transaction', async (t) => {
  const store = openStore(t.testdir());
  t.teardown(() => store.close());
  const meta = store.db('meta');
  const start = FORMAT_VERSION - 1;
  await store.commit(() => meta.put('format_version', start));
  const steps = { [start]: (s: typeof store) => s.db('moved').put('k', 'migrated') };
  t.equal(await migrate(store, logger, steps), FORMAT_VERSION);
  t.equal(store.db('moved').get('k'), 'migrated');
  t.equal(storedFormatVersion(store), FORMAT_VERSION);
});

t.test('a failing step keeps the old format and none of its writes', async (t) => {
  const store = openStore(t.testdir());
  t.teardown(() => store.close());
  const start = FORMAT_VERSION - 1;
  await store.commit(() => store.db('meta').put('format_version', start));
  // Opened before the transaction: a database first opened inside one that rolls back is unusable.
  const moved = store.db('moved');
  const failing = {
    [start]: (s: typeof store) => {
      s.db('moved').put('k', 'half done');
      throw new Error('step failed');
    },
  };
  await t.rejects(migrate(store, logger, failing), /step failed/);
  t.equal(storedFormatVersion(store), start);
  t.equal(moved.get('k'), undefined);
  await t.rejects(migrate(store, logger, {}), /No migration from data format/);
});

t.test('a data dir of a newer format is refused at start', async (t) => {
  const dataDir = t.testdir();
  const store = openStore(dataDir);
  await store.commit(() => store.db('meta').put('format_version', FORMAT_VERSION + 1));
  await t.rejects(migrate(store, logger), new RegExp(`format ${FORMAT_VERSION + 1}, newer than this build understands`));
  t.equal(storedFormatVersion(store), FORMAT_VERSION + 1, 'left as it was');
  await store.close();
  const config = loadConfig({ SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'silent' });
  await t.rejects(openServices(config, { logger }), /newer than this build understands/);
});
