import t from 'tap';
import { startServer } from '../helpers/server.js';
import { person, groupOf, platform } from '../features/groups/helpers.js';
import { linkPath, registerRedirects, requestLink } from '../helpers/sign-in.js';
import { storeDigest } from '../helpers/store-digest.js';
import { tokenKey } from '../../src/lib/secrets.js';

// Each route that stores a location refuses the forms a URL parser reads as another origin.
t.test('locations given to links, invites and OIDC clients are refused when a parser would read them as elsewhere', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const { group } = await groupOf(server, ada);
  const invite = (redirect_url: string) => api.post(`/groups/${group.id}/invites`, { email: 'x@example.com', roles: [], redirect_url });
  for (const url of ['/\\evil.example/x', '/\t/evil.example/', '//evil.example']) t.equal((await invite(url)).status, 400, JSON.stringify(url));

  const link = (redirect_url: string) =>
    server.request('POST', '/hub/auth/magic', { app: server.app, body: { verification_type: 'email', data: { email: 'y@example.com' }, redirect_url } });
  const me = (redirect_url: string) => server.request('POST', '/me/auth/magic', { token: ada.token, body: { redirect_url } });
  const client = (uri: string) => api.post('/oidc-clients', { name: 'c', config: { redirect_uris: [uri] } });
  for (const url of ['http:\\\\evil.example', ' http://x.example ', 'http://x.example/\r\nSet-Cookie:a=b', 'https://a.example\\@evil.example/cb', 'https:///evil.example']) {
    t.equal((await link(url)).status, 400, `link ${JSON.stringify(url)}`);
    t.equal((await me(url)).status, 400, `/me link ${JSON.stringify(url)}`);
    t.equal((await client(url)).status, 400, `client ${JSON.stringify(url)}`);
  }
  t.equal((await invite('/welcome')).status, 200);
  await registerRedirects(server, { allowed_origins: ['https://app.example'] });
  t.equal((await link('https://app.example/in')).status, 200);
});

t.test("a link sends its browser only where the app's OIDC clients registered: elsewhere is 400 and changes nothing", async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const { group } = await groupOf(server, ada);
  const link = (redirect_url: string, email = 'new@example.com') =>
    server.request('POST', '/hub/auth/magic', { app: server.app, body: { verification_type: 'email', data: { email }, redirect_url } });
  const me = (redirect_url: string) => server.request('POST', '/me/auth/magic', { token: ada.token, body: { redirect_url } });
  const invite = (redirect_url: string) => api.post(`/groups/${group.id}/invites`, { email: 'cat@example.com', roles: [], redirect_url });
  const refusal = ["must be one of the redirect_uris of the application's OIDC clients, or a URL on one of their allowed_origins"];

  const other = await server.deps.apps.create('other');
  const otherCredential = await server.deps.apps.createCredential(other.id);
  await registerRedirects(server, { redirect_uris: ['https://evil.example/cb'], allowed_origins: ['https://evil.example'] }, {
    id: other.id,
    key: otherCredential.key,
    secret: otherCredential.secret,
  });
  await registerRedirects(server, { redirect_uris: ['https://app.example/cb?x=1'], allowed_origins: ['https://web.example:8443'] });

  const before = storeDigest(server.deps.store);
  for (const url of [
    'https://evil.example/cb',
    'https://app.example/cb',
    'https://app.example/cb?x=2',
    'https://app.example/cb?x=1&y=2',
    'http://app.example/cb?x=1',
    'https://web.example/in',
    'http://web.example:8443/in',
  ]) {
    for (const [route, res] of [['platform', await link(url)], ['/me', await me(url)], ['invite', await invite(url)]] as const) {
      t.equal(res.status, 400, `${route} ${url}`);
      t.equal(res.body.code, 'E_VALIDATION');
      t.same(res.body.field_errors, { redirect_url: refusal });
    }
  }
  // A registered origin as user name goes to evil.example: refused before the registered places are asked.
  const userinfo = 'https://web.example:8443@evil.example/in';
  for (const [route, res] of [['platform', await link(userinfo)], ['/me', await me(userinfo)], ['invite', await invite(userinfo)]] as const) {
    t.equal(res.status, 400, `${route} ${userinfo}`);
    t.match(res.body.field_errors, { redirect_url: [/must not hold a user name or password/] });
  }
  t.equal(storeDigest(server.deps.store), before, 'no user, link or invite was made');

  for (const url of ['https://app.example/cb?x=1', 'https://app.example/cb?x=1#state', 'https://web.example:8443/', 'https://web.example:8443/any/path?q']) {
    t.equal((await link(url)).status, 200, `platform ${url}`);
    t.equal((await me(url)).status, 200, `/me ${url}`);
  }
  t.equal((await invite('https://web.example:8443/joined')).status, 200, 'an invite link too');
});

t.test('a link whose location its app no longer registers is answered in JSON, never followed nor shown', async (t) => {
  const server = await startServer(t);
  const client = await registerRedirects(server, { allowed_origins: ['https://app.example'] });
  const made = await requestLink(server, 'ada@example.com', { redirect_url: 'https://app.example/in' });
  t.equal(made.status, 200);
  const kept = await requestLink(server, 'bob@example.com', { redirect_url: 'https://app.example/in' });
  t.equal((await server.request('GET', linkPath(kept.body.link))).status, 302, 'followed while registered');

  const api = platform(server);
  t.equal((await api.put(`/oidc-clients/${client.id}`, { config: { allowed_origins: ['https://other.example'] } })).status, 200);
  const redeemed = await server.request('GET', linkPath(made.body.link), { headers: { accept: 'text/html' } });
  t.equal(redeemed.status, 200);
  t.equal(redeemed.headers.get('location'), null);
  t.equal(redeemed.body.redirect_url, null, 'a place it may not go to is not handed to the client to go to');
  t.type(redeemed.body.access_token, 'string', 'the sign-in itself still works');
  const again = await server.request('GET', linkPath(made.body.link), { headers: { accept: 'application/json' } });
  t.equal(again.status, 410);
  t.notMatch(again.text, 'app.example', 'a spent link does not tell where it pointed');
});

t.test('a link stored with a user name or password in its location, from before that was refused, is answered in JSON, never followed nor shown', async (t) => {
  const server = await startServer(t);
  const client = await registerRedirects(server, { allowed_origins: ['https://app.example'], redirect_uris: ['https://app.example/cb'] });
  // What a client and its links stored before the userinfo rule may hold: a registered origin as user name goes to evil.example.
  const clients = server.deps.store.db<any>('oidc_clients');
  const key = [server.app.id, client.id];
  const legacyUri = 'https://app.example@evil.example/cb';
  await server.deps.store.commit(() => clients.put(key, { ...clients.get(key), config: { ...clients.get(key).config, redirect_uris: [legacyUri] } }));
  const links = server.deps.store.db<any>('magic_links');
  const legacyLink = async (email: string, redirectUrl: string) => {
    const made = await requestLink(server, email, { redirect_url: 'https://app.example/in' });
    t.equal(made.status, 200);
    const ref = tokenKey(server.deps.pepper, linkPath(made.body.link).split('/').pop()!);
    await server.deps.store.commit(() => links.put(ref, { ...links.get(ref), redirectUrl }));
    return linkPath(made.body.link);
  };
  for (const url of [legacyUri, 'https://ada:hunter2@app.example/in']) {
    const redeemed = await server.request('GET', await legacyLink(`${url.length}@example.com`, url), { headers: { accept: 'text/html' } });
    t.equal(redeemed.status, 200, `${url} is not followed`);
    t.equal(redeemed.headers.get('location'), null);
    t.equal(redeemed.body?.redirect_url, null);
    t.notMatch(redeemed.text, url, 'nor its password');
    t.type(redeemed.body?.access_token, 'string', 'the sign-in itself still works');
  }
});

t.test("a client's change counts for the very next link: the places a link may go to are never read stale", async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const link = (email: string, redirect_url: string) => requestLink(server, email, { redirect_url });
  const redeem = (made: { body: { link: string } }) => server.request('GET', linkPath(made.body.link), { headers: { accept: 'text/html' } });
  const client = await registerRedirects(server, { redirect_uris: ['https://app.example/cb'] });
  const atCb = await link('ada@example.com', 'https://app.example/cb');
  t.equal(atCb.status, 200, 'the places are read (and kept)');
  t.equal((await link('bob@example.com', 'https://app.example/new')).status, 400);

  const config = (c: object) => api.put(`/oidc-clients/${client.id}`, { config: c });
  t.equal((await config({ redirect_uris: ['https://app.example/new'] })).status, 200);
  t.equal((await link('bob@example.com', 'https://app.example/new')).status, 200, 'a redirect_uri just added');
  t.equal((await link('cat@example.com', 'https://app.example/cb')).status, 400, 'a redirect_uri just removed');
  const atCbRedeemed = await redeem(atCb);
  t.equal(atCbRedeemed.status, 200, 'a link to a redirect_uri just removed answers in JSON');
  t.equal(atCbRedeemed.headers.get('location'), null);

  t.equal((await config({ allowed_origins: ['https://web.example'] })).status, 200);
  const onWeb = await link('dan@example.com', 'https://web.example/in');
  t.equal(onWeb.status, 200, 'an origin just added');
  t.equal((await config({ allowed_origins: ['https://other.example'] })).status, 200);
  t.equal((await link('eve@example.com', 'https://web.example/in')).status, 400, 'an origin just removed');
  t.equal((await link('eve@example.com', 'https://other.example/in')).status, 200);
  const onOther = await link('fay@example.com', 'https://other.example/in');
  t.equal(onOther.status, 200);

  t.equal((await api.del(`/oidc-clients/${client.id}`)).status, 204);
  t.equal((await link('gus@example.com', 'https://other.example/in')).status, 400, 'the places of a client just deleted');
  const onOtherRedeemed = await redeem(onOther);
  t.equal(onOtherRedeemed.status, 200, 'a link to a place of a client just deleted answers in JSON');
  t.equal(onOtherRedeemed.headers.get('location'), null);

  await registerRedirects(server, { allowed_origins: ['https://web.example'] });
  t.equal((await link('gus@example.com', 'https://web.example/in')).status, 200, 'the places of a client just created');
  t.equal((await redeem(onWeb)).status, 302, 'followed again once its place is registered again');
});
