import t from 'tap';
import { newId } from '../../src/lib/ids.js';

const CROCKFORD = /^[0-9A-HJKMNP-TV-Z]{26}$/;

t.test('IDs are prefixed ULIDs, distinct, in creation order, drawing on every random symbol', async (t) => {
  const ids = Array.from({ length: 20_000 }, () => newId('member'));
  t.ok(ids.every((id) => id.startsWith('member_') && CROCKFORD.test(id.slice(7))), 'shape');
  t.equal(new Set(ids).size, ids.length, 'distinct');
  t.same([...ids].sort(), ids, 'byte order is creation order');
  // The first random character of an ID made in a later millisecond than any before is drawn fresh.
  const fresh = Array.from({ length: 2_000 }, (_, i) => newId('group', Date.now() + 1e9 + i * 1000).slice(6 + 10, 6 + 11));
  t.equal(new Set(fresh).size, 32, 'all 32 symbols appear in the random part');
});
