import t from 'tap';
import { startServer } from '../helpers/server.js';
import { signInByLink } from '../helpers/sign-in.js';

// ADDENDUM §0: everything named after the brand derives from SVC_BRAND, over HTTP too.
t.test('SVC_BRAND names the app headers, the profile user field, the reserved namespace and the claim prefix', async (t) => {
  const server = await startServer(t, { env: { SVC_BRAND: 'acme', SVC_CORS_ORIGINS: 'https://app.example' } });
  const { app } = server;
  const appId = app.id;

  const oldHeaders = { 'x-svc-app-key': app.key, 'x-svc-app-secret': app.secret };
  const refused = await server.request('GET', `/applications/${appId}/groups`, { headers: oldHeaders });
  t.equal(refused.status, 401, 'the default brand names no header');
  const headers = { 'x-acme-app-key': app.key, 'x-acme-app-secret': app.secret };
  t.equal((await server.request('GET', `/applications/${appId}/groups`, { headers })).status, 200);

  const signedIn = await signInByLink(server, 'ada@example.com');
  const claims = JSON.parse(Buffer.from(signedIn.access_token.split('.')[1], 'base64url').toString());
  t.match(claims, {
    'https://auth.acme.io/app_user_id': signedIn.app_user_id,
    'https://auth.acme.io/auth_level': 'verified',
    'https://auth.acme.io/is_verified_user': true,
  });
  t.notOk(Object.keys(claims).some((claim) => claim.includes('auth.svc.io')), 'no claim of the default brand');

  const token = signedIn.access_token;
  const me = `/me/applications/${appId}/data`;
  const reserved = await server.request('PATCH', me, { token, body: { attributes: { 'acme:tier': ['gold'] } } });
  t.equal(reserved.status, 400);
  t.same(Object.keys(reserved.body.field_errors), ['attributes.acme:tier'], 'acme: is reserved to the app');
  const free = await server.request('PATCH', me, { token, body: { attributes: { 'svc:tier': ['gold'] } } });
  t.equal(free.status, 200, 'svc: is a namespace like any other under another brand');
  t.equal(free.body.acme_user, signedIn.app_user_id);
  t.notOk('svc_user' in free.body);

  const group = (await server.request('POST', `/applications/${appId}/groups`, { headers, body: { name: 'Crew' } })).body;
  const invite = await server.request('POST', `/applications/${appId}/groups/${group.id}/invites`, {
    headers,
    body: { roles: ['crew'], user_id: signedIn.app_user_id, app_variant_id: 'mobile' },
  });
  t.equal(invite.status, 200);
  const accepted = await server.request('POST', `/me/groups/${group.id}/invites/${invite.body.invitation.id}/accept`, { token });
  t.equal(accepted.status, 200);
  const profile = await server.request('GET', `/applications/${appId}/users/${signedIn.app_user_id}/data`, { headers });
  t.same(profile.body.attributes, { 'svc:tier': ['gold'], 'acme:app_variants': ['mobile'] }, 'the variant joins <brand>:app_variants');

  const preflight = await server.request('OPTIONS', '/me/groups', {
    headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
  });
  t.match(preflight.headers.get('access-control-allow-headers'), /x-acme-app-key, x-acme-app-secret/, 'browsers may send the brand headers');
});
