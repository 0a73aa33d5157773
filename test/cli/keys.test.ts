import t from 'tap';
import { join } from 'node:path';
import { runCli } from '../helpers/child.js';
import { startServer } from '../helpers/server.js';
import { setTimeout } from 'node:timers/promises';
import { meProbe, refreshWith, signInByLink } from '../helpers/sign-in.js';
import { KEY_WATCH_MS } from '../../src/auth/access-tokens.js';

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

t.test('keys rotate --revoke drops every other key at once: a running server refuses their tokens, warm ones too, and a refresh carries on', async (t) => {
  const dataDir = join(t.testdir(), 'data');
  const server = await startServer(t, { dataDir });
  const leaked = await signInByLink(server, 'ada@example.com');
  const oldKid = kidOf(leaked.access_token);
  t.equal((await meProbe(server, leaked.access_token)).status, 200, 'verified once: warm from here on');

  const rotated = await runCli(['keys', 'rotate', '--revoke'], { dataDir });
  t.equal(rotated.code, 0, rotated.stderr);
  const { kid, published } = JSON.parse(rotated.stdout);
  t.not(kid, oldKid);
  t.same(published, [kid], 'only the new key is left');

  // The server reads the key list every KEY_WATCH_MS: nothing else asks it to while the token stays warm.
  let refused = await meProbe(server, leaked.access_token);
  for (let waited = 0; refused.status === 200 && waited < 5 * KEY_WATCH_MS; waited += 50) {
    await setTimeout(50);
    refused = await meProbe(server, leaked.access_token);
  }
  t.equal(refused.status, 401, 'the warm token of the revoked key is refused');
  t.equal(refused.body.code, 'E_UNAUTHORIZED');
  const jwks = (await server.request('GET', '/hub/auth/keys')).body;
  t.same(jwks.keys.map((k: { kid: string }) => k.kid), [kid], 'the JWKS publishes only the new key');

  const refreshed = await refreshWith(server, leaked.refresh_token);
  t.equal(refreshed.status, 200, 'the session goes on: its refresh token was never signed by the key');
  t.equal(kidOf(refreshed.body.access_token), kid);
  t.equal((await meProbe(server, refreshed.body.access_token)).status, 200);
});
