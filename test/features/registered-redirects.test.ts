import t from 'tap';
import { openStore } from '../../src/storage/store.js';
import { RegisteredRedirects } from '../../src/features/oidc-clients/registered-redirects.js';

t.test('the places of the least recently used apps are let go past the budget, and read anew when asked again', async (t) => {
  const store = openStore(t.testdir());
  t.teardown(() => store.close());
  const clients = store.db<any>('oidc_clients');
  const register = (appId: string, origin: string) =>
    store.commit(() => clients.put([appId, 'oidc_client_1'], { id: 'oidc_client_1', app_id: appId, config: { allowed_origins: [origin] } }));
  for (const app of ['a', 'b', 'c']) await register(app, `https://${app}.example`);
  // Each app weighs 2 slots of 64 plus its origin's 17 characters: two fit, not three.
  const redirects = new RegisteredRedirects(store, 2 * (2 * 64 + 17));
  const onOwn = (app: string) => redirects.includes(app, `https://${app}.example/in`);

  t.ok(onOwn('a') && onOwn('b') && onOwn('a'), 'a and b read, a used last');
  t.ok(onOwn('c'), 'c read: b, the least recently used, is let go');
  // Changed behind the cache's back, so that only an app read anew shows it.
  for (const app of ['a', 'b', 'c']) await register(app, 'https://moved.example');
  t.ok(onOwn('a'), 'a is still kept');
  t.ok(onOwn('c'), 'c is still kept');
  t.notOk(onOwn('b'), 'b is read anew');
  t.ok(redirects.includes('b', 'https://moved.example/in'), 'at its new place');
  t.notOk(onOwn('a'), 'reading b let a go');
});
