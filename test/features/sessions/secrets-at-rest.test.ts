import t from 'tap';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '../../helpers/server.js';
import { signInByLink } from '../../helpers/sign-in.js';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

t.test('no refresh token or link id is stored in clear', async (t) => {
  const dataDir = t.testdir();
  const server = await startServer(t, { dataDir });
  const signedIn = await signInByLink(server, 'ada@example.com');
  const refreshed = await server.request('POST', '/hub/auth/token', { body: { refresh_token: signedIn.refresh_token } });
  const pending = await server.request('POST', '/me/auth/magic', { token: refreshed.body.access_token });
  await server.close();

  const secrets = [signedIn.refresh_token, refreshed.body.refresh_token, signedIn.link, pending.body.link].map(
    (value) => value.slice(value.lastIndexOf('/') + 1),
  );
  t.equal(secrets.length, 4);
  const files = filesUnder(dataDir);
  t.ok(files.length > 0, 'the data dir holds the store');
  for (const file of files) {
    const bytes = readFileSync(file);
    for (const secret of secrets) {
      t.notOk(bytes.includes(secret), `${secret.slice(0, 6)}… not in ${file}`);
      t.notOk(bytes.includes(Buffer.from(secret, 'base64url')), `nor its raw bytes in ${file}`);
    }
  }
});
