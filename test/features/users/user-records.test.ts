import t from 'tap';
import fc from 'fast-check';
import { startServer } from '../../helpers/server.js';
import { USER_KIND, userKey } from '../../../src/features/users/directory.js';
import { USER_MACHINE_VERSION, type UserContext } from '../../../machines/user.machine.js';
import { USER_RECORD_MACHINE_VERSION } from '../../../src/features/users/profile-views.js';
import { encodeUserView } from '../../../src/features/users/view-record.js';

const iso = fc.date({ min: new Date(0), max: new Date('2100-01-01'), noInvalidDate: true }).map((date) => date.toISOString());
const text = fc.string({ unit: 'grapheme', maxLength: 12 });

/** Any user the machine can hold: the record must give every part of it back. */
const users = fc.record(
  {
    state: fc.constantFrom('enabled', 'disabled'),
    data: fc.dictionary(text.filter((name) => name !== '__proto__'), fc.jsonValue({ maxDepth: 3 }), { noNullPrototype: true }),
    verified_data: fc.record({ email: text, phone_number: text }, { requiredKeys: [], noNullPrototype: true }),
    attributes: fc.dictionary(text, fc.array(text, { maxLength: 3 }), { noNullPrototype: true }),
    auth_level: fc.constantFrom('unverified', 'verified', 'guest', 'instant'),
    meta: fc.record(
      { created: iso, modified: iso, last_sign_in: iso, last_active: iso, first_sign_in_method: fc.constantFrom('magic_link', 'invite_link') },
      { requiredKeys: ['created', 'modified'], noNullPrototype: true },
    ),
    revokedBefore: fc.nat(),
    revokedSessions: fc.array(fc.record({ sid: text, until: fc.nat() }, { noNullPrototype: true }), { maxLength: 3 }),
  },
  { noNullPrototype: true },
);

t.test('a user written as its view record reads back as the same user, through the runtime too', async (t) => {
  const server = await startServer(t);
  const { profiles, runtime, store } = server.deps;
  const appId = server.app.id;
  await fc.assert(
    fc.asyncProperty(users, async ({ state, ...rest }) => {
      const context = { appId, id: 'u', ...rest } as UserContext;
      await store.commit(() => profiles.rewrite(appId, 'u', { state, context }, 'memberships'));
      t.strictSame(profiles.storedUser(appId, 'u'), { state, context });
      t.strictSame(runtime.read(USER_KIND, userKey(appId, 'u')), { state, context });
      const shown = Object.fromEntries(['email', 'first_name', 'last_name'].flatMap((field) => (Object.hasOwn(context.data, field) ? [[field, context.data[field]]] : [])));
      t.equal(JSON.stringify(profiles.memberProfile(appId, 'u', 'app')), JSON.stringify({ user_id: 'u', ...shown }), 'its member profile too');
    }),
    { numRuns: 150 },
  );
});

t.test("a member profile is read from the record's card alone, never from its body", async (t) => {
  const server = await startServer(t);
  const { profiles, store } = server.deps;
  const appId = server.app.id;
  // A platform body that does not parse: only a read that leaves it alone answers.
  const record = encodeUserView({
    platformHead: '{"data":{"email":"body@example.com"',
    meHead: '',
    tail: 'not JSON',
    schemaStamp: '',
    access: { state: 'enabled', createdAt: 0, revokedBefore: 0, revokedSessions: [] },
    groups: Buffer.alloc(0),
    card: '{"email":"card@example.com","last_name":"Card"}',
  });
  await store.commit(() => profiles.records.put([appId, 'u'], record));
  t.throws(() => profiles.storedUser(appId, 'u'), SyntaxError, 'the body is not JSON');
  t.equal(JSON.stringify(profiles.memberProfile(appId, 'u', 'app')), '{"user_id":"u","email":"card@example.com","last_name":"Card"}');
  t.equal(profiles.memberProfile(appId, 'nobody', 'app'), undefined, 'no profile for no user');
});

t.test('records hold the state of the current user machine version', async (t) => {
  // A new version needs a format step that rewrites every record; records do not say their version.
  t.equal(USER_RECORD_MACHINE_VERSION, USER_MACHINE_VERSION);
});
