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
