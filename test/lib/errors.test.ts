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
