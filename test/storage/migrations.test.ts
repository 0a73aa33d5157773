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
  t.equal(await migrate(store, logger, {}), FORMAT_VERSION);
  t.equal(storedFormatVersion(store), FORMAT_VERSION);
  t.equal(await migrate(store, logger, {}), FORMAT_VERSION, 'a second start changes nothing');
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
  await t.rejects(migrate(store, logger, {}), new RegExp(`format ${FORMAT_VERSION + 1}, newer than this build understands`));
  t.equal(storedFormatVersion(store), FORMAT_VERSION + 1, 'left as it was');
  await store.close();
  const config = loadConfig({ SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'silent' });
  await t.rejects(openServices(config, { logger }), /newer than this build understands/);
});

t.test('format 1 → 2: the read model is rendered anew into one record per user, the old databases dropped', async (t) => {
  const { startServer } = await import('../helpers/server.js');
  const dataDir = t.testdir();
  let server = await startServer(t, { dataDir });
  const app = server.app;
  const appId = app.id;
  for (const id of ['a', 'b']) {
    const put = await server.request('PUT', `/applications/${appId}/users/${id}/data`, { app, body: { data: { n: id } } });
    t.equal(put.status, 200);
  }
  const expected = (await server.request('GET', `/applications/${appId}/users/a/data`, { app })).body;
  // A data dir as format 1 left it: no view records, the old read-model databases in their place.
  const { deps } = server;
  const old = deps.store.db('profile_platform', { encoding: 'binary' });
  await deps.store.commit(() => {
    for (const id of ['a', 'b']) deps.profiles.records.remove([appId, id]);
    old.put([appId, 'a'], Buffer.from('{"stale":true}'));
    deps.store.db('meta').put('format_version', 1);
  });
  await server.close();

  server = await startServer(t, { dataDir });
  t.equal(storedFormatVersion(server.deps.store), FORMAT_VERSION);
  t.notOk(server.deps.store.root.doesExist('profile_platform'), 'the old read model is dropped');
  const read = await server.request('GET', `/applications/${appId}/users/a/data`, { app });
  t.equal(read.status, 200);
  t.same(read.body, expected);
  t.equal((await server.request('GET', `/applications/${appId}/users/b/data`, { app })).body.data.n, 'b');
  const { verifyStore } = await import('../../src/verify/invariants.js');
  const { allInvariants } = await import('../../src/verify/all.js');
  t.same(verifyStore(server.deps, allInvariants).problems, []);
});

t.test('format 2 → 3: view records are rendered anew with the groups part, so later profile changes keep the groups', async (t) => {
  const { startServer } = await import('../helpers/server.js');
  const { signInByLink } = await import('../helpers/sign-in.js');
  const dataDir = t.testdir();
  let server = await startServer(t, { dataDir });
  const { app } = server;
  const owner = await signInByLink(server, 'owner@example.com');
  const group = await server.request('POST', '/me/groups', { token: owner.access_token, body: { name: 'kept' } });
  t.equal(group.status, 200);
  const userId = owner.app_user_id;
  const expected = (await server.request('GET', `/applications/${app.id}/users/${userId}/data`, { app })).body;
  t.equal(expected.groups.length, 1);
  // The record as format 2 wrote it: four parts (platform, me, schema stamp, access), no groups part.
  const { deps } = server;
  const current = Buffer.from(deps.profiles.records.getBinary([app.id, userId])!);
  const header = 16 + 4;
  const parts = [0, 1, 2, 3].map((index) => current.readUInt32LE(index * 4));
  const format2 = Buffer.alloc(16 + parts.reduce((a, b) => a + b, 0));
  parts.forEach((length, index) => format2.writeUInt32LE(length, index * 4));
  current.copy(format2, 16, header, header + format2.length - 16);
  await deps.store.commit(() => {
    deps.profiles.records.put([app.id, userId], format2);
    deps.store.db('meta').put('format_version', 2);
  });
  await server.close();

  server = await startServer(t, { dataDir });
  t.equal(storedFormatVersion(server.deps.store), FORMAT_VERSION);
  t.same((await server.request('GET', `/applications/${app.id}/users/${userId}/data`, { app })).body, expected);
  const write = await server.request('PATCH', `/applications/${app.id}/users/${userId}/data`, { app, body: { data: { n: 1 } } });
  t.equal(write.status, 200);
  t.same(write.body.groups, expected.groups, 'a profile change after the migration still lists the group');
  const { verifyStore } = await import('../../src/verify/invariants.js');
  const { allInvariants } = await import('../../src/verify/all.js');
  t.same(verifyStore(server.deps, allInvariants).problems, []);
});
