import t from 'tap';
import * as v from 'valibot';
import { ApiError } from '../../src/lib/errors.js';
import { fitsCharacters, parseInput } from '../../src/lib/validate.js';

const fieldErrorsFor = (input: unknown): Record<string, string[]> => {
  try {
    parseInput(v.object({ required: v.boolean() }), input);
  } catch (error) {
    return (error as ApiError).fieldErrors ?? {};
  }
  throw new Error('accepted');
};

t.test('a mistyped value is named in words, a string one cut as keys are', async (t) => {
  t.same(fieldErrorsFor({ required: 3 }), { required: ['must be boolean, not 3'] });
  const secret = 'sec_yNFUIRIOnzXFb_zEKqq-QDpeQ6lp29BLTop1YVSlGu8';
  t.same(fieldErrorsFor({ required: secret }), { required: ['must be boolean, not "sec_yN…"'] }, 'a secret pasted in the wrong place is not echoed');
  const long = 'x'.repeat(200_000);
  t.same(fieldErrorsFor({ required: long }), { required: [`must be boolean, not "${'x'.repeat(64)}…"`] }, 'a long string is cut');
  t.same(fieldErrorsFor({ required: 'yes' }), { required: ['must be boolean, not "yes"'] });
});

t.test('fitsCharacters counts code points: a character outside the BMP is one, a lone surrogate one', async (t) => {
  t.ok(fitsCharacters('', 0));
  t.ok(fitsCharacters('abc', 3));
  t.notOk(fitsCharacters('abcd', 3));
  t.ok(fitsCharacters('😀😀😀', 3), 'three emoji, six UTF-16 units');
  t.notOk(fitsCharacters('😀😀😀😀', 3));
  t.ok(fitsCharacters('a😀\uD800', 3), 'a lone surrogate counts once');
  t.notOk(fitsCharacters('a😀\uD800b', 3));
});
