import t from 'tap';
import { decodeValue, openStore } from '../../src/storage/store.js';
import fs, { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const store = openStore(t.testdir());
t.teardown(() => store.close());

t.test('decodeValue decodes the bytes of a stored value as a get does', async (t) => {
  const records = store.db<{ name: string; tags: string[]; nested: { n: number } }>('records');
  const values = [
    { name: 'first', tags: ['a'], nested: { n: 1 } },
    { name: 'second', tags: [], nested: { n: 2 } },
  ];
  await store.commit(() => values.forEach((value, i) => records.put(`r${i}`, value)));
  values.forEach((value, i) => {
    const fast = records.getBinaryFast(`r${i}`)!;
    // A copy of the value's bytes: the fast buffer is lmdb's, reused, with its length set to the value's.
    const bytes = Uint8Array.prototype.slice.call(fast, 0, fast.length);
    t.same(decodeValue(records, bytes), value);
    t.same(decodeValue(records, bytes), records.get(`r${i}`));
  });
});

t.test('decodeValue refuses a database that stores raw bytes', async (t) => {
  const raw = store.db<Buffer>('raw', { encoding: 'binary' });
  t.throws(() => decodeValue(raw, Buffer.from('x')), TypeError);
});

t.test('values are stored as plain msgpack maps, and values stored as records (before) still read back', async (t) => {
  const { open } = await import('lmdb');
  const dir = t.testdir();
  const shapes = Array.from({ length: 80 }, (_, i) => ({ id: i, [`field${i}`]: { [`inner${i}`]: [i] } }));
  // More shapes than the 32 lmdb-js shares, as an older build wrote them: records with structures.
  const before = open({ path: dir, compression: false, maxDbs: 8, noSubdir: false });
  const old = before.openDB({ name: 'values' });
  await before.transaction(() => shapes.forEach((shape, i) => old.put(i, shape)));
  const isMap = (bytes: Buffer) => (bytes[0] & 0xf0) === 0x80 || bytes[0] === 0xde || bytes[0] === 0xdf;
  t.notOk(isMap(old.getBinary(79)!), 'the older write stored records, not maps');
  await before.close();

  const reopened = openStore(dir);
  t.teardown(() => reopened.close());
  const values = reopened.db('values');
  shapes.forEach((shape, i) => t.same(values.get(i), shape));
  await reopened.commit(() => values.put('new', { plain: true }));
  t.ok(isMap(values.getBinary('new')!), 'a new value is a msgpack map');
});

// Pins lmdb-js behaviour the answer of every write relies on: with `overlappingSync` (its default on
// Linux) the flush follows the commit, yet the commit's promise settles only after the flush.
// lmdb-js's writer thread marks a transaction committed once `mdb_txn_commit` has returned, flush
// included (src/writer.cpp), and any of its callbacks settles the promises of marked transactions;
// its `flushed` promise waits for the callback that ends the write. So now and then (once in a full
// test run under load) a commit settles through the earlier "visible" callback, after its flush but a
// loop turn before `flushed` says so; a commit settled before its flush would show in nearly every one.
// No lmdb-js 3 setting settles a write before its flush (`separateFlushed` only adds a promise), so
// only a change in lmdb-js could fail this: it guards the dependency, not a setting of ours.
t.test('a commit resolves only once its writes are flushed to disk, not merely committed', async (t) => {
  const db = store.db<number>('flushed');
  /** Whether lmdb-js already reports the last commit flushed: its `flushed` settles within microtasks then. */
  const alreadyFlushed = () =>
    Promise.race([
      new Promise<boolean>((resolve) => store.root.flushed.then(() => resolve(true))),
      new Promise<boolean>((resolve) => setImmediate(() => resolve(false))),
    ]);
  const commits = 20;
  let flushedFirst = 0;
  for (let i = 0; i < commits; i++) {
    await store.commit(() => db.put('n', i));
    if (await alreadyFlushed()) flushedFirst++;
  }
  t.ok(flushedFirst >= commits - 2, `${flushedFirst} of ${commits} commits settled with their flush already reported`);
});

t.test('a data dir and its files are its owner\'s alone: they hold the pepper and the signing keys', async (t) => {
  const dir = join(t.testdir(), 'private');
  mkdirSync(dir, { mode: 0o755 });
  writeFileSync(join(dir, 'stray'), 'x', { mode: 0o644 });
  const opened = openStore(dir);
  t.teardown(() => opened.close());
  await opened.commit(() => opened.db('x').put('k', 1));
  t.equal(statSync(dir).mode & 0o777, 0o700, 'a dir made open before is closed at the next open');
  for (const name of readdirSync(dir)) t.equal(statSync(join(dir, name)).mode & 0o777, 0o600, name);
});

t.test('a file another process removes while the data dir is narrowed (a claim draft beside a starting server) does not fail the open', async (t) => {
  const dir = join(t.testdir(), 'data');
  mkdirSync(dir);
  const draft = join(dir, '.server.pid.12345');
  writeFileSync(draft, '12345\n');
  // The other process removes its draft right after this one listed the data dir.
  const { readdirSync: list } = fs;
  fs.readdirSync = ((...args: Parameters<typeof list>) => {
    const names = list(...args);
    if (args[0] === dir) rmSync(draft, { force: true });
    return names;
  }) as typeof list;
  syncBuiltinESMExports();
  t.teardown(() => {
    fs.readdirSync = list;
    syncBuiltinESMExports();
  });
  const opened = openStore(dir);
  t.teardown(() => opened.close());
  await opened.commit(() => opened.db('x').put('k', 1));
  t.equal(opened.db('x').get('k'), 1);
});

t.test('a read-only store reads a database its data dir lacks as empty, and leaves nothing in the temp dir even while open (a verify killed)', async (t) => {
  const dir = join(t.testdir(), 'data');
  const temp = join(t.testdir(), 'tmp');
  mkdirSync(temp);
  const writer = openStore(dir);
  await writer.commit(() => writer.db('kept').put('k', 1));
  await writer.close();

  // A temp dir of this test's own, unlike the shared one that other processes use.
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = temp;
  t.teardown(() => (previous === undefined ? delete process.env.TMPDIR : (process.env.TMPDIR = previous)));
  const reader = openStore(dir, { readOnly: true });
  t.teardown(() => reader.close());
  t.equal(reader.db('kept').get('k'), 1);
  for (const name of ['absent', 'also-absent', 'absent-bytes']) {
    t.notOk(reader.hasDb(name), `the data dir lacks ${name}`);
    const db = reader.db(name, name === 'absent-bytes' ? { encoding: 'binary' } : {});
    t.equal(db.get('k'), undefined, `${name}: no value`);
    t.same([...db.getRange({ start: 'a', end: 'z' })], [], `${name}: no range`);
    t.same([...db.getKeys({})], [], `${name}: no key`);
  }
  t.same(readdirSync(tmpdir()), [], 'no scratch environment left in the temp dir while the store is open');
  await t.rejects(reader.commit(() => {}), /open read-only/);
  t.notOk(reader.hasDb('absent'), 'nor made in the data dir');
});
