import t from 'tap';
import { encodeGroupEntries, encodeUserView, meBody, meView, platformBody, withGroupEntry } from '../../../src/features/users/view-record.js';

const groups = (...ids: string[]) => encodeGroupEntries(ids.map((groupId) => ({ groupId, member: `{"of":"${groupId}"}` })));

/** A view record of these bodies and groups, enabled, with no revocation marks. */
const recordOf = (parts: { platformHead: string; meHead: string; tail: string; schemaStamp?: string; groups?: Buffer }) =>
  encodeUserView({
    schemaStamp: '',
    access: { state: 'enabled', createdAt: 0, revokedBefore: 0, revokedSessions: [] },
    groups: groups(),
    ...parts,
  });

t.test('a group entry is set in group ID order, replaced in place, and dropped', async (t) => {
  t.same(withGroupEntry(groups('g1', 'g3'), 'g2', '{"of":"g2"}'), groups('g1', 'g2', 'g3'), 'inserted between');
  t.same(withGroupEntry(groups('g2', 'g3'), 'g1', '{"of":"g1"}'), groups('g1', 'g2', 'g3'), 'inserted first');
  t.same(withGroupEntry(groups(), 'g1', '{"of":"g1"}'), groups('g1'), 'into none');
  t.same(withGroupEntry(groups('g1', 'g2'), 'g3', '{"of":"g3"}'), groups('g1', 'g2', 'g3'), 'appended');
  const replaced = withGroupEntry(groups('g1', 'g2'), 'g1', '{"new":1}');
  t.same(replaced, encodeGroupEntries([{ groupId: 'g1', member: '{"new":1}' }, { groupId: 'g2', member: '{"of":"g2"}' }]));
  t.same(withGroupEntry(groups('g1', 'g2', 'g3'), 'g2', undefined), groups('g1', 'g3'), 'dropped');
  t.same(withGroupEntry(groups('g1'), 'g9', undefined), groups('g1'), 'dropping an absent entry changes nothing');
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
