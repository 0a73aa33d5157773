import t from 'tap';
import { startServer } from '../../helpers/server.js';
import { linkPath, refreshWith, signInByLink } from '../../helpers/sign-in.js';
import { storedBytes } from '../../helpers/data-files.js';

t.test('no refresh token or link id is stored or logged in clear', async (t) => {
  const dataDir = t.testdir();
  const logLines: string[] = [];
  const server = await startServer(t, {
    dataDir,
    env: { SVC_LOG_LEVEL: 'debug' },
    logDestination: { write: (line: string) => void logLines.push(line) },
  });
  const signedIn = await signInByLink(server, 'ada@example.com');
  const refreshed = (await refreshWith(server, signedIn.refresh_token)).body;
  const pending = await server.request('POST', '/me/auth/magic', { token: refreshed.access_token });
  const refused = await server.request('GET', linkPath(signedIn.link));
  t.equal(refused.status, 410, 'a refused redemption is logged too');
  await server.close();

  const linkIds = [signedIn.link, pending.body.link].map((link) => link.slice(link.lastIndexOf('/') + 1));
  const secrets = [signedIn.refresh_token, refreshed.refresh_token, ...linkIds];
  const stored = storedBytes(dataDir);
  const logs = logLines.join('');
  t.match(logs, /"route":"GET \/hub\/auth\/magic\/:id"/, 'redemptions were logged at debug');
  for (const secret of secrets) {
    t.notOk(stored.includes(secret), `${secret.slice(0, 6)}… is not stored`);
    t.notOk(stored.includes(Buffer.from(secret, 'base64url')), 'nor are its raw bytes');
    t.notOk(logs.includes(secret), 'nor is it logged');
  }
  t.notOk(logs.includes(refreshed.access_token), 'no access token is logged');
});
