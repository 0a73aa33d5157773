import t from 'tap';
import { startServer } from '../../helpers/server.js';
import { linkPath, refreshWith, requestLink, signInByLink } from '../../helpers/sign-in.js';
import { manualClock } from '../../../src/lib/clock.js';
import { verifyStore } from '../../../src/verify/invariants.js';
import { allInvariants } from '../../../src/verify/all.js';

t.test('sessions and links stay consistent through every path; damage is reported', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const { deps } = server;
  const ada = await signInByLink(server, 'ada@example.com');
  const bob = await signInByLink(server, 'bob@example.com');
  const rotated = (await refreshWith(server, ada.refresh_token)).body;
  await refreshWith(server, ada.refresh_token); // reuse: ends Ada's first session
  const adaAgain = await signInByLink(server, 'ada@example.com');
  await refreshWith(server, adaAgain.refresh_token);
  await requestLink(server, 'bob@example.com');
  const expiring = (await requestLink(server, 'carol@example.com', { expiration: '30m' })).body.link;
  await server.request('POST', `/applications/${server.app.id}/users/${bob.app_user_id}/signout`, {
    app: server.app,
    body: { sign_out_all: true },
  });
  clock.advance(8 * 86_400_000);
  await requestLink(server, 'carol@example.com'); // forgets Carol's long-dead link
  t.equal((await server.request('GET', linkPath(expiring))).status, 404);
  t.equal((await refreshWith(server, rotated.refresh_token)).status, 400);
  t.same(verifyStore(deps, allInvariants).problems, []);

  const tokens = deps.store.db('refresh_tokens');
  const [someToken] = [...tokens.getRange({ limit: 1 })];
  await deps.store.commit(() => tokens.remove(someToken.key));
  t.match(verifyStore(deps, allInvariants).problems, [/refresh token chains: .*names no refresh token/]);
  await deps.store.commit(() => tokens.put(someToken.key, someToken.value));

  const byUser = deps.store.db('user_magic_links');
  const [someEntry] = [...byUser.getKeys({ limit: 1 })];
  await deps.store.commit(() => byUser.remove(someEntry));
  t.match(verifyStore(deps, allInvariants).problems, [/magic link index: .*is not indexed/]);
  await deps.store.commit(() => byUser.put(someEntry, true));
  t.same(verifyStore(deps, allInvariants).problems, []);
});
