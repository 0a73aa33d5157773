import t from 'tap';
import { ApiError, shownKey, validationError } from '../../src/lib/errors.js';

t.test('shownKey names a caller-chosen key without echoing a secret or a whole long key', async (t) => {
  t.equal(shownKey(''), '""');
  t.equal(shownKey('nickname'), 'nickname');
  t.equal(shownKey('x'.repeat(64)), 'x'.repeat(64), 'up to 64 characters shown whole');
  t.equal(shownKey('x'.repeat(65)), `${'x'.repeat(64)}…`);
  t.equal(shownKey('sec_Abcdefghijklmnopqrstuvwxyz0123456789'), 'sec_Ab…', 'a credential-like key: its first 6 characters');
});

t.test('shownKey never cuts a surrogate pair in half', async (t) => {
  const key = `${'x'.repeat(63)}😀tail`;
  const shown = shownKey(key);
  t.equal(shown, `${'x'.repeat(63)}…`, 'the pair at the cut is left out whole');
  t.notMatch(shown, /\p{Cs}/u, 'no lone surrogate');
  t.equal(shownKey(`${'x'.repeat(62)}😀tail`), `${'x'.repeat(62)}😀…`, 'a pair that fits is kept');
});

t.test('messages holds the message, then each field error as <field>: <message> (ADDENDUM §7: at least [message])', async (t) => {
  t.same(new ApiError(404, 'E_GROUP_NOT_FOUND', 'group "x" not found').messages, ['group "x" not found']);
  const refused = validationError({ name: ['is required'], 'roles[0]': ['must not be empty', 'must be a string'] });
  t.same(refused.messages, ['Invalid request', 'name: is required', 'roles[0]: must not be empty', 'roles[0]: must be a string']);
  t.same(validationError({}).messages, ['Invalid request'], 'no field errors: the message alone');
});

t.test('a refusal names at most 100 fields, then says how many more it refused', async (t) => {
  const fieldErrors = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i}`, ['is not a field']]));
  const most = validationError(fieldErrors(100));
  t.equal(Object.keys(most.fieldErrors!).length, 100);
  t.equal(most.messages.length, 101, 'the message and a line a field');
  const many = validationError({ ...fieldErrors(250), f0: ['is not a field', 'twice'] });
  t.same(Object.keys(many.fieldErrors!), Array.from({ length: 100 }, (_, i) => `f${i}`), 'the first 100, in order');
  t.same(many.fieldErrors!.f0, ['is not a field', 'twice'], 'each with all its messages');
  t.equal(many.messages.length, 1 + 101 + 1);
  t.equal(many.messages.at(-1), 'and 150 more fields refused');
  const proto = validationError(Object.fromEntries([['__proto__', ['x']], ...Object.entries(fieldErrors(120))]));
  t.ok(Object.hasOwn(proto.fieldErrors!, '__proto__'), 'a field named __proto__ stays a field');
});
