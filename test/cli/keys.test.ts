import t from 'tap';
import { join } from 'node:path';
import { runCli } from '../helpers/child.js';
import { startServer } from '../helpers/server.js';
import { signInByLink } from '../helpers/sign-in.js';

const kidOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()).kid;

t.test('keys rotate from the CLI reaches a running server at once', async (t) => {
  const dataDir = join(t.testdir(), 'data');
  const server = await startServer(t, { dataDir });
  const before = await signInByLink(server, 'ada@example.com');
  const oldKid = kidOf(before.access_token);

  const rotated = await runCli(['keys', 'rotate'], { dataDir });
  t.equal(rotated.code, 0, rotated.stderr);
  const { kid, published } = JSON.parse(rotated.stdout);
  t.not(kid, oldKid);
  t.same([...published].sort(), [oldKid, kid].sort(), 'the old key stays published');

  const jwks = (await server.request('GET', '/hub/auth/keys')).body;
  t.same(jwks.keys.map((k: { kid: string }) => k.kid).sort(), [oldKid, kid].sort(), 'the server publishes both');
  const after = await signInByLink(server, 'bob@example.com');
  t.equal(kidOf(after.access_token), kid, 'the server signs with the new key');
  t.equal((await server.request('POST', '/me/auth/magic', { token: before.access_token })).status, 200, 'old tokens still work');

  const help = await runCli(['help'], { dataDir });
  t.match(help.stdout, /keys rotate/);
});
