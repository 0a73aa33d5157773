import t from 'tap';
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { jsonEqual } from '../../src/lib/json-equal.js';

t.test('agrees with isDeepStrictEqual on JSON values', async () => {
  fc.assert(fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => jsonEqual(a, b) === isDeepStrictEqual(a, b)));
});

t.test('a value equals its copy in any key order, and not one changed anywhere', async (t) => {
  const shuffled = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(shuffled);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.entries(value).reverse().map(([key, member]) => [key, shuffled(member)]));
  };
  fc.assert(fc.property(fc.jsonValue(), (value) => jsonEqual(value, shuffled(value))));
  const profile = { name: 'Ada', tags: ['a', 'b'], address: { city: 'London', lines: [1, null] }, ok: true };
  t.ok(jsonEqual(profile, structuredClone(profile)));
  for (const changed of [
    { ...profile, name: 'Bob' },
    { ...profile, tags: ['a'] },
    { ...profile, tags: ['a', 'b', 'c'] },
    { ...profile, address: { city: 'London', lines: [1, 0] } },
    { ...profile, address: { city: 'London' } },
    { ...profile, ok: 'true' },
    { ...profile, extra: null },
    { ...profile, tags: { 0: 'a', 1: 'b' } },
  ]) {
    t.notOk(jsonEqual(profile, changed), JSON.stringify(changed));
    t.notOk(jsonEqual(changed, profile), `${JSON.stringify(changed)}, the other way round`);
  }
  t.notOk(jsonEqual(null, {}));
  t.notOk(jsonEqual([], {}));
  t.notOk(jsonEqual(1, '1'));
});
