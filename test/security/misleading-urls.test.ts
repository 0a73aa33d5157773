import t from 'tap';
import { startServer } from '../helpers/server.js';
import { storeDigest } from '../helpers/store-digest.js';
import { linkPath, registerRedirects } from '../helpers/sign-in.js';
import { as, groupOf, person, platform } from '../features/groups/helpers.js';
import { InviteService } from '../../src/features/groups/invite-service.js';

// A location a person reads (an invite's redirect_url shown to group owners, a client's URLs) refuses the
// characters that make it show otherwise than written, as names do (docs/API.md), rather than keep them
// raw or store another spelling than the one given. (No answer holding U+2028 goes into an assertion's
// message: tap's parser reads it as a line end.)

const MISLEADING = ['\u0085', '\u009B', '\u061C', '\u200E', '\u200F', '\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069', '\u2028', '\u2029'];
const hex = (c: string) => `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

const server = await startServer(t);
const api = platform(server);
const owner = await person(server, 'owner@example.com');
const { group } = await groupOf(server, owner);
await registerRedirects(server, { allowed_origins: ['https://app.example'] });
const pending = (await api.post(`/groups/${group.id}/invites`, { email: 'pending@example.com', roles: [] })).body.invitation;
const client = (await api.post('/oidc-clients', { name: 'Mobile' })).body;
const invites = `/applications/${server.app.id}/groups/${group.id}/invites`;

type Case = { what: string; method: string; path: string; body: (url: string, origin: string) => unknown; field: string; bearer?: boolean };

const cases: Case[] = [
  { what: 'invite (platform)', method: 'POST', path: invites, body: (url) => ({ email: 'x@example.com', roles: [], redirect_url: url }), field: 'redirect_url' },
  { what: 'invite path (platform)', method: 'POST', path: invites, body: () => ({ email: 'x@example.com', roles: [], redirect_url: '/wel\u202Ecome' }), field: 'redirect_url' },
  { what: 'invite on /me', method: 'POST', path: `/me/groups/${group.id}/invites`, bearer: true, body: (url) => ({ email: 'x@example.com', roles: [], redirect_url: url }), field: 'redirect_url' },
  { what: 'invite update', method: 'PUT', path: `${invites}/${pending.id}`, body: (url) => ({ roles: [], redirect_url: url }), field: 'redirect_url' },
  { what: 'magic link (platform)', method: 'POST', path: '/hub/auth/magic', body: (url) => ({ verification_type: 'email', data: { email: 'y@example.com' }, redirect_url: url }), field: 'redirect_url' },
  { what: 'magic link on /me', method: 'POST', path: '/me/auth/magic', bearer: true, body: (url) => ({ redirect_url: url }), field: 'redirect_url' },
  ...(['redirect_uris', 'post_logout_uris'] as const).map((key) => ({
    what: `client ${key}`,
    method: 'PUT',
    path: `/applications/${server.app.id}/oidc-clients/${client.id}`,
    body: (url: string) => ({ config: { [key]: ['https://app.example/cb', url] } }),
    field: `config.${key}[1]`,
  })),
  ...(['logo_uri', 'logo_dark_mode_uri'] as const).map((key) => ({
    what: `client ${key}`,
    method: 'POST',
    path: `/applications/${server.app.id}/oidc-clients`,
    body: (url: string) => ({ name: 'Web', config: { [key]: url } }),
    field: `config.${key}`,
  })),
  { what: 'client allowed_origins', method: 'POST', path: `/applications/${server.app.id}/oidc-clients`, body: (_, origin) => ({ name: 'Web', config: { allowed_origins: [origin] } }), field: 'config.allowed_origins[0]' },
];

t.test('each URL field refuses each misleading character inside it: 400 naming the field, and nothing changed', async (t) => {
  const before = storeDigest(server.deps.store);
  for (const c of cases) {
    for (const character of MISLEADING) {
      const res = await server.request(c.method, c.path, {
        body: c.body(`https://app.example/in${character}gpj.exe`, `https://app${character}.example`),
        ...(c.bearer ? { token: owner.token } : { app: server.app }),
      });
      const label = `${c.what} with ${hex(character)}`;
      t.equal(res.status, 400, label);
      t.match(res.body, { statusCode: 400, error: 'Bad Request', code: 'E_VALIDATION', message: String, messages: [String] }, label);
      t.same(Object.keys(res.body.field_errors ?? {}), [c.field], `${label}: the field is named`);
      t.match(res.body.field_errors?.[c.field], [/must not contain control characters, bidirectional controls or line separators/], `${label}: in words`);
    }
  }
  t.equal(storeDigest(server.deps.store), before, 'nothing changed');
});

t.test('an invite location stored before the rule reads as stored, its link is not followed, and a PUT sending it back is refused', async (t) => {
  const stored = '/wel\u202Ecome';
  // Planted as a build before the rule stored it: the service takes what the schema checked.
  const { invite, link } = await new InviteService(server.deps.groups).create({ kind: 'app', appId: server.app.id }, group.id, {
    ref: { email: 'legacy@example.com' },
    roles: [],
    redirect_url: stored,
  });
  const read = await api.get(`/groups/${group.id}/invites/${invite.context.id}`);
  t.equal(read.status, 200);
  t.equal(read.body.redirect_url, stored, 'shown as stored');
  const sentBack = await api.put(`/groups/${group.id}/invites/${invite.context.id}`, read.body);
  t.equal(sentBack.status, 400);
  t.same(Object.keys(sentBack.body.field_errors), ['redirect_url']);
  t.equal((await as(server, owner).get(`/me/groups/${group.id}/invites/${invite.context.id}`)).body.redirect_url, stored, 'on /me too');

  const redeemed = await server.request('GET', linkPath(link!), { headers: { accept: 'text/html' } });
  t.equal(redeemed.status, 200, 'answered in JSON');
  t.equal(redeemed.headers.get('location'), null, 'not followed');
  t.equal(redeemed.body.redirect_url, null, 'nor handed to the client to follow');
  t.type(redeemed.body.access_token, 'string', 'the sign-in itself still works');
});

t.test('a client URL stored before the rule reads as stored', async (t) => {
  const stored = 'https://app.example/cb\u202Egpj.exe';
  const clients = server.deps.store.db<any>('oidc_clients');
  const key = [server.app.id, client.id];
  await server.deps.store.commit(() => clients.put(key, { ...clients.get(key), config: { ...clients.get(key).config, redirect_uris: [stored] } }));
  server.deps.redirects.forget(server.app.id);
  const read = await api.get(`/oidc-clients/${client.id}`);
  t.equal(read.status, 200);
  t.same(read.body.config.redirect_uris, [stored], 'shown as stored');
});
