import t from 'tap';
import { decodeValue, openStore } from '../../src/storage/store.js';

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
