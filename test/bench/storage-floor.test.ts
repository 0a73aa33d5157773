import t from 'tap';
import { measureStorageFloor } from '../../bench/storage-floor.js';
import { openStore } from '../../src/storage/store.js';
import { USER_VIEWS_DB } from '../../src/features/users/profile-views.js';

const load = { seconds: 0.2, warmupSeconds: 0.05, connections: 4 };

async function seeded(dir: string, userIds: string[]): Promise<Map<string, Buffer>> {
  const store = openStore(dir);
  const records = store.db<Buffer>(USER_VIEWS_DB, { encoding: 'binary' });
  const written = new Map(userIds.map((id) => [id, Buffer.from(`record of ${id}`)]));
  await store.commit(() => {
    for (const [id, record] of written) records.put(['app_1', id], record);
  });
  await store.close();
  return written;
}

t.test('the floor commits records back unchanged and reports its rate and latencies', async (t) => {
  const dir = t.testdir();
  const userIds = Array.from({ length: 20 }, (_, n) => `user_${n}`);
  const written = await seeded(dir, userIds);

  const floor = await measureStorageFloor(dir, 'app_1', userIds, load);
  t.ok(floor.writes > 0, 'it wrote');
  t.equal(floor.connections, load.connections, 'it names its lanes');
  t.equal(floor.writesPerSecond, floor.writes / floor.seconds);
  t.ok(floor.p50Ms > 0, 'latencies are measured');
  t.ok(floor.cpuMicrosPerWrite > 0);

  const store = openStore(dir);
  const records = store.db<Buffer>(USER_VIEWS_DB, { encoding: 'binary' });
  for (const [id, record] of written) t.same(records.getBinary(['app_1', id]), record, `${id} unchanged`);
  await store.close();
});

t.test('a user without a record stops the floor with its ID', async (t) => {
  const dir = t.testdir();
  await seeded(dir, ['user_1']);
  await t.rejects(measureStorageFloor(dir, 'app_1', ['user_missing'], load), /no view record for user user_missing/);
  await t.rejects(measureStorageFloor(dir, 'app_1', [], load), /needs seeded users/);
});
