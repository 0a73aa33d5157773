import t from 'tap';
import { startServer } from '../helpers/server.js';
import { person, groupOf, platform } from '../features/groups/helpers.js';

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
  t.equal((await link('https://app.example/in')).status, 200);
});
