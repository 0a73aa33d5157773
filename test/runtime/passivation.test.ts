import t from 'tap';
import { startServer, type TestServer } from '../helpers/server.js';
import { manualClock } from '../../src/lib/clock.js';

// Passivation as a running server does it, over the service's own routes, at the smallest idle time.

/** `actors_resident` as `/metrics` reports it. */
async function resident(server: TestServer): Promise<number> {
  const { text } = await server.request('GET', '/metrics');
  return Number(/^actors_resident (\d+)$/m.exec(text)![1]);
}

t.test('an actor a turn only reads is used all the same: the idle sweep spares it', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock, env: { SVC_ACTOR_IDLE_MS: '1000' } });
  // The same profile again changes nothing: that turn reads its user and sends it no event.
  const write = () => server.request('PUT', `/applications/${server.app.id}/users/u1/data`, { app: server.app, body: { data: { first_name: 'Ada' } } });
  t.equal((await write()).status, 200);
  clock.advance(1500);
  t.equal((await write()).status, 200);
  server.deps.runtime.passivateIdle();
  t.equal(await resident(server), 1, 'the user read by a turn just now stays');
  clock.advance(1500);
  server.deps.runtime.passivateIdle();
  t.equal(await resident(server), 0, 'and goes once unused for the idle time');
});

t.test('at a cap of 1, with idle sweeps between, concurrent field writes to 20 users are all kept and each answers its own write', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock, env: { SVC_MAX_ACTORS: '1', SVC_ACTOR_IDLE_MS: '1000' } });
  const users = Array.from({ length: 20 }, (_, i) => `cap-user-${i}`);
  const fields = ['f0', 'f1', 'f2', 'f3', 'f4'];
  const base = `/applications/${server.app.id}/users`;
  for (const status of await Promise.all(users.map((u) => server.request('PUT', `${base}/${u}/data`, { app: server.app, body: { data: { first_name: u } } }).then((r) => r.status)))) {
    t.equal(status, 200);
  }
  let sweeping = true;
  const residents: number[] = [];
  const sweeps = (async () => {
    while (sweeping) {
      clock.advance(1500);
      server.deps.runtime.passivateIdle();
      residents.push(await resident(server));
      t.equal((await server.request('GET', '/health')).status, 200);
    }
  })();
  const writes = users.flatMap((u) =>
    fields.map(async (field) => {
      const value = `${u}/${field}`;
      const res = await server.request('PUT', `${base}/${u}/data/fields/${field}`, { app: server.app, body: { value } });
      return { u, field, status: res.status, answered: res.body?.data?.[field], name: res.body?.data?.first_name };
    }),
  );
  const answers = await Promise.all(writes);
  sweeping = false;
  await sweeps;
  const wrong = answers.filter((a) => a.status !== 200 || a.answered !== `${a.u}/${a.field}` || a.name !== a.u);
  t.same(wrong, [], 'every write answers 200 with its own value');
  for (const u of users) {
    const { body } = await server.request('GET', `${base}/${u}/data`, { app: server.app });
    t.same(
      fields.map((field) => body.data[field]),
      fields.map((field) => `${u}/${field}`),
      `${u}: every field written is kept`,
    );
  }
  t.ok(residents.length > 0, `${residents.length} sweeps and /metrics reads ran during the writes`);
  t.ok(Math.max(...residents) <= users.length, `never more resident than users held by turns in flight (most: ${Math.max(...residents)})`);
  t.ok((await resident(server)) <= 1, 'the cap holds once the writes are done');
});

t.test('SVC_MAX_ACTOR_BYTES caps the stored bytes of the resident users: wide profiles do not stay resident by the dozen', async (t) => {
  const server = await startServer(t, { env: { SVC_MAX_ACTOR_BYTES: String(1 << 20) } });
  const base = `/applications/${server.app.id}/users`;
  const metric = async (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec((await server.request('GET', '/metrics')).text)![1]);
  // Some 550 kB of data each: its record is over half the cap.
  const wide = (user: string) => Object.fromEntries(Array.from({ length: 15_000 }, (_, i) => [`field_${i}`, `${user}-${i}`.padEnd(20, '.')]));
  const users = ['w1', 'w2', 'w3', 'w4', 'w5'];
  for (const user of users) {
    t.equal((await server.request('PUT', `${base}/${user}/data`, { app: server.app, body: { data: wide(user) } })).status, 200);
    const bytes = await metric('actors_resident_bytes');
    t.ok(bytes > 1 << 19 && bytes <= 1 << 20, `after ${user}: ${bytes} stored bytes resident, within the cap`);
    t.equal(await metric('actors_resident'), 1, 'one wide user at a time');
  }
  for (const user of ['s1', 's2', 's3']) {
    t.equal((await server.request('PUT', `${base}/${user}/data`, { app: server.app, body: { data: { first_name: user } } })).status, 200);
  }
  t.equal(await metric('actors_resident'), 4, 'small users stay beside it');
  for (const user of users) {
    const { body } = await server.request('GET', `${base}/${user}/data`, { app: server.app });
    t.same(body.data, { ...wide(user), user_id: user }, `${user} is kept whole`);
  }
  t.equal((await server.request('PATCH', `${base}/w1/data`, { app: server.app, body: { data: { field_0: 'changed' } } })).status, 200);
  t.equal((await server.request('GET', `${base}/w1/data/fields/field_0`, { app: server.app })).body.value, 'changed', 'a passivated wide user is activated again for a write');
});
