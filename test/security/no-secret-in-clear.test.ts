import t from 'tap';
import { alteredSecret, startServer } from '../helpers/server.js';
import { platformProbe, probePath } from '../helpers/probe.js';
import { filesUnder, storedBytes } from '../helpers/data-files.js';
import { startServerWithSchema } from '../helpers/schema.js';
import { linkPath, refreshWith, registerRedirects, requestLink, signInByLink } from '../helpers/sign-in.js';

const ADMIN_TOKEN = 'no-secret-admin-token-0123456789';

t.test('secrets appear neither in the data dir, nor in debug logs, /metrics or error bodies', async (t) => {
  const dataDir = t.testdir();
  const logLines: string[] = [];
  const server = await startServer(t, {
    dataDir,
    env: { SVC_ADMIN_TOKEN: ADMIN_TOKEN, SVC_LOG_LEVEL: 'debug' },
    extraRoutes: platformProbe,
    logDestination: { write: (line: string) => void logLines.push(line) },
  });
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const app = (await server.request('POST', '/admin/applications', { headers: admin, body: { name: 'Secretive' } })).body;
  const viaApi = (await server.request('POST', `/admin/applications/${app.id}/credentials`, { headers: admin })).body;
  const viaStore = await server.deps.apps.createCredential(app.id);
  const credentials = [server.app, { id: app.id, ...viaApi }, { id: app.id, ...viaStore }];
  for (const credential of credentials) {
    t.equal((await server.request('GET', probePath(credential.id), { app: credential })).status, 200);
    const config = await server.request('GET', '/hub/app-config', {
      headers: { [server.deps.config.names.appKeyHeader]: credential.key },
    });
    t.equal(config.status, 200);
    const profilePath = `/applications/${credential.id}/users/secret-keeper/data`;
    t.equal((await server.request('PUT', profilePath, { app: credential, body: { data: { first_name: 'Kept' } } })).status, 200);
    t.equal((await server.request('GET', profilePath, { app: credential })).status, 200);
    const wrong = { ...credential, secret: alteredSecret(credential.secret) };
    t.equal((await server.request('GET', probePath(credential.id), { app: wrong })).status, 401);
  }
  // A secret sent where it does not belong, and in a body that fails to parse.
  await server.request('POST', '/admin/applications', { headers: admin, body: { name: viaApi.secret, extra: viaStore.secret } });
  await server.request('POST', '/admin/applications', {
    headers: { ...admin, 'content-type': 'application/json' },
    rawBody: `{"name": "${viaApi.secret}"`,
  });
  await server.request('GET', '/admin/applications', { headers: { authorization: `Bearer ${viaApi.secret}` } });
  t.equal((await server.request('DELETE', `/admin/applications/${app.id}/credentials/${viaStore.key}`, { headers: admin })).status, 204);

  // The other secrets the service hands out: OIDC client secrets, magic-link ids, access and refresh tokens.
  const oidc = await server.request('POST', `/applications/${server.app.id}/oidc-clients`, { app: server.app, body: { name: 'Web' } });
  t.equal(oidc.status, 200);
  const oidcSecret: string = oidc.body.credentials[0].secret;
  const link = await server.request('POST', '/hub/auth/magic', {
    app: server.app,
    body: { verification_type: 'email', data: { email: 'secret-keeper@example.com' } },
  });
  t.equal(link.status, 200);
  const linkId = new URL(link.body.link).pathname.split('/').pop()!;
  const signedIn = await server.request('GET', new URL(link.body.link).pathname);
  t.equal(signedIn.status, 200);
  const refreshed = await server.request('POST', '/hub/auth/token', { body: { refresh_token: signedIn.body.refresh_token } });
  t.equal(refreshed.status, 200);
  const reused = await server.request('POST', '/hub/auth/token', { body: { refresh_token: signedIn.body.refresh_token } });
  t.equal(reused.status, 400, 'a reused refresh token is refused (and must not be echoed)');
  const tokens = [signedIn.body.access_token, signedIn.body.refresh_token, refreshed.body.access_token, refreshed.body.refresh_token];
  const metrics = (await server.request('GET', '/metrics')).text;
  const answers = [reused.text];
  const pepper = server.deps.pepper;
  await server.close();

  const secrets = [...credentials.map((c) => c.secret), ADMIN_TOKEN, oidcSecret, linkId, ...tokens];
  for (const secret of secrets) {
    t.notOk(metrics.includes(secret), `/metrics does not hold ${secret.slice(0, 6)}…`);
    t.notOk(answers.some((text) => text.includes(secret)), `error bodies do not hold ${secret.slice(0, 6)}…`);
  }
  const logs = logLines.join('');
  t.match(logs, /"route":"GET \/applications\/:app\/probe"/, 'the requests were logged at debug');
  t.match(logs, /"route":"POST \/admin\/applications"/);
  t.match(logs, /"route":"PUT \/applications\/:app\/users\/:user\/data"/);
  for (const secret of [...secrets, pepper.toString('hex'), pepper.toString('base64'), pepper.toString('base64url')]) {
    t.notOk(logs.includes(secret), `the logs do not hold ${secret.slice(0, 6)}…`);
  }

  t.ok(filesUnder(dataDir).some((file) => file.endsWith('data.mdb')), 'the LMDB data file was scanned');
  const stored = storedBytes(dataDir);
  t.ok(stored.includes(viaApi.key), 'the scan sees stored text (the publishable key)');
  for (const secret of secrets) t.notOk(stored.includes(secret), `the data dir does not hold ${secret.slice(0, 6)}…`);
});

t.test('a secret sent where a name or an ID goes is not echoed back; a path is never in an error message', async (t) => {
  const server = await startServer(t);
  const { secret } = server.app;
  const answers = [
    await server.request('POST', '/hub/auth/token', { body: { [secret]: 1 } }),
    await server.request('PATCH', `/applications/${server.app.id}/users/u1/data`, { app: server.app, body: { attributes: { [secret]: ['x'] } } }),
    await server.request('GET', `/applications/${server.app.id}/oidc-clients/${secret}`, { app: server.app }),
    await server.request('POST', '/hub/auth/magic/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg'),
  ];
  for (const answer of answers) {
    t.ok(answer.status >= 400, answer.text);
    t.notMatch(answer.text, secret.slice(6), 'not the secret, beyond its first characters');
  }
  t.notMatch(answers[3].text, 'AbCdEfGh', 'the 405 names no path');
  const user = await server.request('GET', `/applications/${server.app.id}/users/user_01M829W01FW09S9KP2C2D8G2PF/data`, { app: server.app });
  t.match(user.body.message, 'user_01M829W01FW09S9KP2C2D8G2PF', 'a resource ID is shown whole');
});

t.test('a name given twice or badly (query parameter, form field, multipart part) is shown as any key is: a secret there is not echoed', async (t) => {
  const server = await startServer(t);
  const { app } = server;
  const { secret } = app;
  const twice = new FormData();
  twice.append(secret, 'a');
  twice.append(secret, 'b');
  const boundary = 'b0und4ry';
  const notUtf8 = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${secret}"\r\n\r\n`),
    Buffer.from([0xff, 0xfe]),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const answers = [
    await server.request('GET', `/applications/${app.id}/groups?${secret}=1&${secret}=2`, { app }),
    await server.request('POST', '/hub/auth/token', {
      rawBody: `${secret}=1&${secret}=2`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    }),
    await server.request('PUT', `/applications/${app.id}/users/u1/data`, { app, rawBody: twice }),
    await server.request('PUT', `/applications/${app.id}/users/u1/data`, {
      app,
      rawBody: notUtf8,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    }),
  ];
  for (const answer of answers) {
    t.equal(answer.status, 400, answer.text.slice(0, 200));
    t.notMatch(answer.text, secret.slice(6), 'not the secret, beyond its first characters');
    t.same(Object.keys(answer.body.field_errors), [`${secret.slice(0, 6)}…`], 'the name shown as shownKey shows a key');
  }
});

t.test('a file sent to a field PUT whose {field} is no file field is refused naming the field as any key is', async (t) => {
  const server = await startServer(t);
  const { app } = server;
  const { secret } = app;
  t.equal((await server.request('PUT', `/applications/${app.id}/users/u1/data`, { app, body: { data: {} } })).status, 200);
  const file = new FormData();
  file.append('value', new Blob([Buffer.from('not an image')], { type: 'image/png' }), 'a.png');
  const answer = await server.request('PUT', `/applications/${app.id}/users/u1/data/fields/${secret}`, { app, rawBody: file });
  t.equal(answer.status, 400, answer.text.slice(0, 200));
  t.notMatch(answer.text, secret.slice(6), 'not the secret, beyond its first characters');
  t.same(Object.keys(answer.body.field_errors), [`${secret.slice(0, 6)}…`]);
});

t.test('the secrets of every sign-in and credential flow reach neither trace logs nor /metrics', async (t) => {
  const logLines: string[] = [];
  const server = await startServerWithSchema(
    t,
    { fields: { contract: { type: 'file' } } },
    { env: { SVC_ADMIN_TOKEN: ADMIN_TOKEN, SVC_LOG_LEVEL: 'trace' }, logDestination: { write: (line: string) => void logLines.push(line) } },
  );
  const { app } = server;
  const linkId = (link: string) => linkPath(link).split('/').pop()!;
  const secrets: string[] = [ADMIN_TOKEN, app.secret];
  await registerRedirects(server, { redirect_uris: ['https://app.example/cb'] });

  // Tokens handed out in a redirect's fragment, and the link that led there (its query ignored).
  const made = await requestLink(server, 'fragment@example.com', { redirect_url: 'https://app.example/cb' });
  const redirected = await server.request('GET', `${linkPath(made.body.link)}?utm_source=mail`);
  t.equal(redirected.status, 302);
  const fragment = new URLSearchParams(new URL(redirected.headers.get('location')!).hash.slice(1));
  secrets.push(linkId(made.body.link), fragment.get('access_token')!, fragment.get('refresh_token')!);

  // A /me link, a refresh by form body, a bearer token and a refresh token that are wrong.
  const signedIn = await signInByLink(server, 'keeper@example.com');
  secrets.push(linkId(signedIn.link), signedIn.access_token, signedIn.refresh_token);
  const meLink = await server.request('POST', '/me/auth/magic', { token: signedIn.access_token, body: {} });
  t.equal(meLink.status, 200);
  secrets.push(linkId(meLink.body.link));
  const refreshed = await server.request('POST', '/hub/auth/token', {
    rawBody: `grant_type=refresh_token&refresh_token=${signedIn.refresh_token}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.equal(refreshed.status, 200);
  secrets.push(refreshed.body.access_token, refreshed.body.refresh_token);
  const wrongBearer = alteredSecret(refreshed.body.access_token);
  t.equal((await server.request('GET', `/me/applications/${app.id}/data`, { token: wrongBearer })).status, 401);
  t.equal((await refreshWith(server, alteredSecret(refreshed.body.refresh_token))).status, 400);
  secrets.push(wrongBearer, alteredSecret(refreshed.body.refresh_token));

  // An invite's link, redeemed; an OIDC client's second credential; a wrong admin token and app secret.
  const group = await server.request('POST', `/applications/${app.id}/groups`, { app, body: { name: 'G' } });
  const invite = await server.request('POST', `/applications/${app.id}/groups/${group.body.id}/invites`, {
    app,
    body: { email: 'invited@example.com', roles: ['member'] },
  });
  t.equal(invite.status, 200);
  t.equal((await server.request('GET', linkPath(invite.body.link))).status, 200);
  secrets.push(linkId(invite.body.link));
  const client = await registerRedirects(server, {});
  const credential = await server.request('POST', `/applications/${app.id}/oidc-clients/${client.id}/credentials`, { app, body: { name: 'second' } });
  t.equal(credential.status, 200);
  secrets.push(credential.body.secret);
  const wrongAdmin = alteredSecret(ADMIN_TOKEN);
  t.equal((await server.request('GET', '/admin/applications', { headers: { authorization: `Bearer ${wrongAdmin}` } })).status, 401);
  const wrongApp = { ...app, secret: alteredSecret(app.secret) };
  t.equal((await server.request('GET', `/applications/${app.id}/groups`, { app: wrongApp })).status, 401);
  secrets.push(wrongAdmin, wrongApp.secret);

  // A file's bytes, and secrets sent in the path and query of a route that does not exist.
  const fileText = 'file-contents-kept-out-of-logs-0123456789';
  const upload = new FormData();
  upload.set('contract', new Blob([fileText], { type: 'text/plain' }), 'contract.txt');
  t.equal((await server.request('PUT', `/applications/${app.id}/users/filer/data`, { app, rawBody: upload })).status, 200);
  t.equal((await server.request('GET', `/applications/${app.id}/users/filer/data/fields/contract`, { app })).status, 200);
  secrets.push(fileText);
  t.equal((await server.request('GET', `/nowhere/${app.secret}?token=${signedIn.refresh_token}`)).status, 404);

  const metrics = (await server.request('GET', '/metrics')).text;
  const signingKeys = [...server.deps.store.db<{ privateJwk: { d: string } }>('signing_keys').getRange({})].map(({ value }) => value.privateJwk.d);
  t.ok(signingKeys.length > 0, 'the signing keys were read');
  secrets.push(...signingKeys);
  await server.close();

  const logs = logLines.join('');
  t.match(logs, /"route":"GET \/hub\/auth\/magic\/:id"/, 'the requests were logged at trace');
  t.match(logs, /"route":"POST \/hub\/auth\/token"/);
  t.match(logs, /"route":"fallback"/);
  for (const secret of secrets) {
    t.notOk(logs.includes(secret), `the logs do not hold ${secret.slice(0, 6)}…`);
    t.notOk(metrics.includes(secret), `/metrics does not hold ${secret.slice(0, 6)}…`);
  }
});
