import t from 'tap';
import fc from 'fast-check';
import {
  accessPart,
  cardPart,
  encodeGroupEntries,
  encodeUserView,
  format5Upgraded,
  format6Parts,
  format6Upgraded,
  meBody,
  meView,
  memberCardOf,
  platformBody,
  withGroupEntry,
} from '../../../src/features/users/view-record.js';
import { asFormat6Record, format5Record } from '../../helpers/view-records.js';

const groups = (...ids: string[]) => encodeGroupEntries(ids.map((groupId) => ({ groupId, member: `{"of":"${groupId}"}` })));

/** A view record of these bodies and groups, enabled, with no revocation marks (and an empty card unless given). */
const recordOf = (parts: { platformHead: string; meHead: string; tail: string; schemaStamp?: string; groups?: Buffer; card?: string }) =>
  encodeUserView({
    schemaStamp: '',
    access: { state: 'enabled', createdAt: 0, revokedBefore: 0, revokedSessions: [] },
    groups: groups(),
    card: '{}',
    ...parts,
  });

const accessMarks = fc.record({
  // At most 8 graphemes: a state's byte length must fit the part's one-byte length.
  state: fc.string({ unit: 'grapheme', maxLength: 8 }),
  createdAt: fc.double(),
  revokedBefore: fc.double(),
  revokedSessions: fc.array(fc.record({ sid: fc.string({ unit: 'grapheme', maxLength: 40 }), until: fc.double() }), { maxLength: 5 }),
});

t.test('access marks and the member card come back as they went in', async (t) => {
  fc.assert(
    fc.property(accessMarks, fc.json(), (access, card) => {
      const bodies = { platformHead: '{"id":"ü","groups":', meHead: '{"groups":', tail: '}', schemaStamp: 'stamp', groups: groups('g1') };
      const record = encodeUserView({ ...bodies, access, card });
      t.same(accessPart(record), access);
      t.equal(format6Parts(record), undefined, "this build's layout is not taken for format 6's");
      t.equal(format5Upgraded(record), undefined);
      return cardPart(record) === card && platformBody(record, () => Buffer.from('{}')).toString() === '{"id":"ü","groups":[{"group":{},"member":{"of":"g1"}}]}';
    }),
  );
});

t.test("a member card holds the email, first and last name that data holds, in that order, and nothing else", async (t) => {
  t.equal(memberCardOf({ user_id: 'u', last_name: 'Lovelace', phone_number: '+1', email: 'ada@example.com', first_name: 'Ada' }), '{"email":"ada@example.com","first_name":"Ada","last_name":"Lovelace"}');
  t.equal(memberCardOf({ user_id: 'u', last_name: 'Ünsal "q" \u2028', email: null }), '{"email":null,"last_name":"Ünsal \\"q\\" \u2028"}');
  t.equal(memberCardOf({ user_id: 'u' }), '{}');
  t.equal(memberCardOf(JSON.parse('{"__proto__":{"email":"inherited"}}')), '{}', 'only fields of its own');
});

t.test('a format-5 record is known by its JSON access marks; steps 5 and 6 bring it to this layout, every part kept', async (t) => {
  const access = { state: 'disabled', createdAt: 1, revokedBefore: 2, revokedSessions: [{ sid: 'ses_1', until: 3 }] };
  const texts = ['{"id":"u","data":{"user_id":"u","first_name":"Ada","x":"y"},"groups":', '{"groups":', ',"meta":{}}', 'stamp'];
  const format5 = format5Record(texts, access, groups('g1'));
  const format6 = format5Upgraded(format5)!;
  t.ok(format6Parts(format6), 'step 5 keeps the six parts');
  t.equal(format5Upgraded(format6), undefined, 'binary marks are not taken for JSON');
  const [platformHead, meHead, tail, schemaStamp] = texts;
  const current = { platformHead, meHead, tail, schemaStamp, access, groups: groups('g1'), card: '{"first_name":"Ada"}' };
  t.same(format6, asFormat6Record(encodeUserView(current)), 'step 5 changes the access part alone');
  t.same(format6Upgraded(format6), encodeUserView(current), 'step 6 adds the card of the platform body, every other part kept');
  t.equal(format6Upgraded(encodeUserView(current)), undefined, "a record of this build's layout is left alone");
  const empty = encodeUserView({ ...current, platformHead: '', meHead: '', groups: groups() });
  t.equal(format6Parts(empty), undefined, 'not even with empty first parts');
  const parts = format6Parts(asFormat6Record(empty));
  t.same(parts?.map(String).slice(0, 4), ['', '', tail, schemaStamp], 'while the same parts without the card are read as format 6');
});

t.test('a group entry is set in group ID order, replaced in place, and dropped, the rest of the record kept', async (t) => {
  const bodies = { platformHead: '{"id":"u","groups":', meHead: '{"groups":', tail: ',"meta":{}}', schemaStamp: 'stamp', card: '{"email":"u@example.com"}' };
  const withEntry = (ids: string[], groupId: string, member: string | undefined) =>
    withGroupEntry(recordOf({ ...bodies, groups: groups(...ids) }), groupId, member);
  const expect = (record: Buffer, entries: Buffer, what: string) =>
    t.same(record, recordOf({ ...bodies, groups: entries }), what);
  expect(withEntry(['g1', 'g3'], 'g2', '{"of":"g2"}'), groups('g1', 'g2', 'g3'), 'inserted between');
  expect(withEntry(['g2', 'g3'], 'g1', '{"of":"g1"}'), groups('g1', 'g2', 'g3'), 'inserted first');
  expect(withEntry([], 'g1', '{"of":"g1"}'), groups('g1'), 'into none');
  expect(withEntry(['g1', 'g2'], 'g3', '{"of":"g3"}'), groups('g1', 'g2', 'g3'), 'appended');
  const replaced = encodeGroupEntries([{ groupId: 'g1', member: '{"new":1}' }, { groupId: 'g2', member: '{"of":"g2"}' }]);
  expect(withEntry(['g1', 'g2'], 'g1', '{"new":1}'), replaced, 'replaced');
  expect(withEntry(['g1', 'g2', 'g3'], 'g2', undefined), groups('g1', 'g3'), 'dropped');
  expect(withEntry(['g1'], 'g9', undefined), groups('g1'), 'dropping an absent entry changes nothing');
  expect(withEntry(['g1', 'g2'], 'g2', undefined), groups('g1'), 'the last dropped');
});

t.test('setting group entries one by one agrees with listing them anew', async (t) => {
  const id = fc.stringMatching(/^[a-z0-9_]{1,6}$/);
  const change = fc.record({ groupId: id, member: fc.option(fc.json(), { nil: undefined }) });
  fc.assert(
    fc.property(fc.array(change, { maxLength: 30 }), (changes) => {
      const listed = new Map<string, string>();
      let record = recordOf({ platformHead: '{"groups":', meHead: '{"groups":', tail: '}', card: '{"first_name":"F"}' });
      for (const { groupId, member } of changes) {
        record = withGroupEntry(record, groupId, member);
        if (member === undefined) listed.delete(groupId);
        else listed.set(groupId, member);
      }
      const ordered = [...listed].sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      const expected = recordOf({ platformHead: '{"groups":', meHead: '{"groups":', tail: '}', card: '{"first_name":"F"}', groups: encodeGroupEntries(ordered.map(([groupId, member]) => ({ groupId, member }))) });
      return record.equals(expected);
    }),
  );
});

t.test('bodies are put together with each listed group rendered once, skipping a group that is gone', async (t) => {
  const record = recordOf({
    platformHead: '{"id":"u","data":{"secret":1},"groups":',
    meHead: '{"id":"u","data":{},"groups":',
    tail: ',"meta":{}}',
    schemaStamp: 'stamp',
    groups: groups('g1', 'gone', 'g2'),
  });
  const rendered: Record<string, Buffer> = { g1: Buffer.from('{"name":"one"}'), g2: Buffer.from('{"name":"two"}') };
  const groupBytes = (id: string) => rendered[id];
  t.same(JSON.parse(platformBody(record, groupBytes).toString()), {
    id: 'u',
    data: { secret: 1 },
    groups: [
      { group: { name: 'one' }, member: { of: 'g1' } },
      { group: { name: 'two' }, member: { of: 'g2' } },
    ],
    meta: {},
  });
  const view = meView(record);
  t.equal(view.schemaStamp, 'stamp');
  t.same(JSON.parse(meBody(view, groupBytes).toString()).data, {});
  const none = recordOf({ platformHead: '{"groups":', meHead: '{"groups":', tail: '}' });
  t.equal(platformBody(none, groupBytes).toString(), '{"groups":[]}');
});

t.test("bodies copy out of LMDB's reused read buffer, which is larger than the value it holds", async (t) => {
  const { openStore } = await import('../../../src/storage/store.js');
  const store = openStore(t.testdir());
  t.teardown(() => store.close());
  const records = store.db<Buffer>('records', { encoding: 'binary' });
  const record = (size: number) => recordOf({ platformHead: `{"pad":"${'x'.repeat(size)}","groups":`, meHead: '{"groups":', tail: '}' });
  await store.commit(() => {
    records.put('big', record(100_000));
    records.put('small', record(10));
  });
  records.getBinaryFast('big');
  const small = records.getBinaryFast('small')!;
  t.equal(platformBody(small, () => undefined).toString(), `{"pad":"${'x'.repeat(10)}","groups":[]}`);
  t.equal(meBody(meView(small), () => undefined).toString(), '{"groups":[]}');
});
