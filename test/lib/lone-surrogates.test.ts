import t from 'tap';
import fc from 'fast-check';
import { findLoneSurrogate } from '../../src/lib/lone-surrogates.js';

/** Strings built from backslashes, `u`, whole pairs and every surrogate half, alone or side by side. */
const unit = fc.oneof(
  fc.constantFrom('a', '\\', 'u', '"', '\u{1F600}'),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)),
);

/** Whether some key or string of `value` does not survive UTF-8, by another road than the walk: the JSON serializer's visits. */
function survivesUtf8(value: unknown): boolean {
  let survives = true;
  const same = (text: string) => Buffer.from(text, 'utf8').toString('utf8') === text;
  JSON.stringify(value, (key, member) => {
    if (!same(key) || (typeof member === 'string' && !same(member))) survives = false;
    return member;
  });
  return survives;
}

t.test('finds a lone surrogate exactly when a key or string would not survive UTF-8', async () => {
  fc.assert(
    fc.property(fc.jsonValue({ stringUnit: unit }), (value) => {
      // JSON.stringify writes a lone surrogate as a `\u` escape, as a hostile client would.
      const text = JSON.stringify(value);
      return (findLoneSurrogate(text, JSON.parse(text)) === undefined) === survivesUtf8(value);
    }),
    { numRuns: 500 },
  );
});

t.test('names where it lies', async (t) => {
  const found = (text: string) => findLoneSurrogate(text, JSON.parse(text));
  t.same(found('"\\ud800"'), { path: [], problem: 'has a lone surrogate \\ud800 (half of a UTF-16 pair): text must be well-formed Unicode' });
  t.same(found('{"data":{"city":"x\\uDFFFy"}}')?.path, ['data', 'city']);
  t.same(found('{"a":[1,{"b":["ok","\\udbff"]}]}')?.path, ['a', 1, 'b', 1]);
  const key = found('{"data":{"\\ude00a\\ud800":1}}');
  t.same(key?.path, ['data', '\\ude00a\\ud800'], 'a key is written with its surrogates as escapes');
  t.match(key?.problem, /^the key has a lone surrogate \\ude00 /);
  t.same(found('{"\\ud83d":{"\\ud83d\\ude00":1}}')?.path, ['\\ud83d'], 'a key is checked before what it holds');
});

t.test('a pair is one character; an escaped backslash is no escape; the walk needs an escape', async (t) => {
  const found = (text: string) => findLoneSurrogate(text, JSON.parse(text));
  t.equal(found('{"\\ud83d\\ude00":"\\uD83D\\uDE00"}'), undefined);
  t.equal(found('{"a":"\\\\ud800"}'), undefined);
  t.equal(found('{"a":"\\u00e9\\u4e2d"}'), undefined);
  t.equal(findLoneSurrogate('{"a":"x"}', { a: '\ud800' }), undefined, 'text without a surrogate escape is not walked');
});
