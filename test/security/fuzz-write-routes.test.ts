import t from 'tap';
import { corsProblem, errorBodyProblem, isBrowserRoute, originOf, REGISTERED_ORIGIN as SPA, startFuzzServer, fuzzRun } from '../helpers/fuzz.js';
import { tokenFor } from '../helpers/tokens.js';
import { rawRequest, type RawResponse } from '../helpers/raw-http.js';
import { storeDigest } from '../helpers/store-digest.js';
import { linkPath } from '../helpers/sign-in.js';
import { labelledRandom } from '../helpers/seeded-random.js';
import { blackPng } from '../helpers/png.js';
import { manyScanJpeg } from '../helpers/jpeg.js';
import { isPlainObject } from '../../src/lib/validate.js';
import { crc32 } from 'node:zlib';
import sharp from 'sharp';

// A seeded fuzz of every write route: each starts from a valid request, which is then mutated (wrong
// JSON types at every level, odd numbers and strings, lone surrogates, deep nesting, duplicate and
// prototype keys, content types, query junk, path IDs too long, empty or of another kind or app).
// Every answer: no 5xx, no hang, no dropped connection; a refusal has the ADDENDUM §7 body with a code
// of §7 at its status, and changes nothing stored; a mutation that no reading of the docs allows is
// refused. Besides, one request of each of the input rules of round 19 (API.md) a route has: read-only
// keys a PUT takes and ignores (an accepted one changed nothing they name), names, emails, field names and
// attribute keys holding a bidirectional control or line separator, `.`/`..` as IDs and field names,
// image bodies past the pixel budget or the JPEG scan limit, and an Origin header (answered only when an
// OIDC client registers it, on the routes browser clients call). FUZZ_SEED replays another run;
// FUZZ_PER_ROUTE sends more mutations per route, FUZZ_PER_RULE more of each rule.
const { seed, perRoute, perRule, random, pick } = fuzzRun(t, { perRoute: 14, perRule: 1 });

// The clock stands still: a user's first `/me` call stamps `meta.last_active`, later ones write nothing.
const { server, deps, app, names, appHeaders, adminHeaders, bearer, ok, platform } = await startFuzzServer(t, {
  fields: Object.fromEntries(
    ['nickname:string', 'age:number', 'subscribed:boolean', 'prefs:object', 'avatar:image', 'photo:image', 'banner:image', 'contract:file'].map((f) => {
      const [name, type] = f.split(':');
      return [name, { type, user_readable: true, user_writable: true }];
    }),
  ) as never,
  allow_unknown_fields: false,
});

let serial = 0;
/** A fresh signed-in user whose first `/me` call (the one that stamps `last_active`) is behind it. */
async function person() {
  const who = await tokenFor(server, { email: `p${++serial}@example.com` });
  await ok(server.request('GET', `/me/applications/${app.id}/data`, { token: who.token }), 'first /me call');
  return who;
}

// Seeded once: another application with a group and a user (IDs "of another app"), and an OIDC client
// whose redirect URI links may carry.
const otherApp = await deps.apps.create('other');
const otherCredential = await deps.apps.createCredential(otherApp.id);
const otherAuth = { id: otherApp.id, key: otherCredential.key, secret: otherCredential.secret };
const otherGroup = await ok(server.request('POST', `/applications/${otherApp.id}/groups`, { app: otherAuth, body: { name: 'Theirs' } }), 'other group');
await ok(server.request('PUT', `/applications/${otherApp.id}/users/their-user/data`, { app: otherAuth, body: { data: {} } }), 'other user');
const redirect = 'https://app.example/cb';
// Its client registers the one origin CORS answers on browser routes (no template drops it).
const seededClient = await platform('POST', '/oidc-clients', { name: 'Web', config: { redirect_uris: [redirect], allowed_origins: [SPA] } });
// An app taking any profile field, where a field name meets its own rules rather than the schema's.
const openApp = await deps.apps.create('open');
await deps.apps.update(openApp.id, { schema: { fields: {}, allow_unknown_fields: true } });
const openCredential = await deps.apps.createCredential(openApp.id);
const openHeaders = [`${names.appKeyHeader}: ${openCredential.key}`, `${names.appSecretHeader}: ${openCredential.secret}`];

/** A group of a fresh owner, with an active member, a pending invite (made by the app: it has a link) and a user outside it. */
async function groupScene() {
  const owner = await person();
  const member = await person();
  const invitee = await person();
  const outsider = await person();
  const made = await ok(server.request('POST', '/me/groups', { token: owner.token, body: { name: 'Crew', meta: { k: { n: 1 } } } }), 'group');
  const group = made.group.id as string;
  const added = await platform('POST', `/groups/${group}/members`, { user_id: member.userId, roles: ['editor'] });
  const invited = await platform('POST', `/groups/${group}/invites`, { user_id: invitee.userId, roles: ['viewer'] });
  return { owner, member, invitee, outsider, group, memberId: added.id as string, invite: invited.invitation.id as string };
}

// A member and an invite of another group of the app, for paths that pair them with the wrong group.
const elsewhere = await groupScene();
const ofAnotherGroup: Record<string, string> = { member: elsewhere.memberId, invite: elsewhere.invite };

interface Target {
  params: Record<string, string>;
  headers: string[];
  body?: unknown;
  /** IDs of the right shape for each path parameter, but of another kind or app. */
  foreign?: Record<string, string>;
}

interface Template {
  method: string;
  path: string;
  setup: () => Promise<Target>;
  /** Values (and all inside them) that may be anything. */
  free?: string[];
  /** Objects whose keys the caller names: unknown keys pass, `__proto__`, `prototype` and `constructor` do not. */
  named?: string[];
  /** Objects that take any key. */
  open?: string[];
  /** Path parameters that a valid ID of another kind may still name (an upsert creates it). */
  creates?: string[];
  /** Where the resource a 2xx answered can be read again: the read answers what the write did. */
  readBack?: (params: Record<string, string>, answer: any) => string;
  /** Told apart in the test name when several templates share a route. */
  variant?: string;
  multipart?: boolean;
  /** A multipart `value` part is read as text (a string field's), not as JSON. */
  textValue?: true;
  /** The route takes no credentials (the link is one, or the refresh token). */
  public?: true;
  /** The route ignores its query string (a link's redemption). */
  ignoresQuery?: boolean;
  /** The read-only keys the route (a PUT) takes and ignores. */
  readOnly?: ReadOnly;
  /** The read-only keys of the resource's PUT, which this body (a create, a PATCH) refuses. */
  refusesReadOnly?: string[];
}

interface ReadOnly {
  keys: string[];
  /** Where the resource is read, before and after: what the keys name there must not change. */
  read: (params: Record<string, string>) => string;
  /** The resource in what that read answers. */
  shown?: (read: any) => any;
  /** Keys the PUT itself sets (API.md): they may change, but not to the value sent. */
  moves?: string[];
}

// The read-only keys API.md lists for each resource's PUT.
const GROUP_READ_ONLY = ['id', 'member_count', 'app_id', 'created_at', 'updated_at', 'created_by', 'updated_by'];
/** A group's PUT that changes it moves its `updated_at` and `updated_by`, a member's and an OIDC client's their `updated_at` (one that changes nothing keeps them). */
const GROUP_MOVES = ['updated_at', 'updated_by'];
const MEMBER_READ_ONLY = ['id', 'user_id', 'group_id', 'state', 'invited_by', 'added_by', 'created_at', 'updated_at', 'profile'];
const INVITE_READ_ONLY = ['id', 'group_id', 'state', 'user_lookup_value', 'created_at', 'created_by', 'accepted_by', 'ensured_user_id'];
const CLIENT_READ_ONLY = ['id', 'app_id', 'created_at', 'updated_at', 'credentials'];
const PROFILE_READ_ONLY = [names.userField, 'state', 'auth_level', 'verified_data', 'groups', 'meta', 'connection_map'];
/** A member create body names its user and state: the member's other read-only keys are unknown there. */
const MEMBER_CREATE_REFUSES = MEMBER_READ_ONLY.filter((key) => key !== 'user_id' && key !== 'state');

const profileBody = () => ({
  data: { email: `f${++serial}@example.com`, first_name: 'Ada', nickname: 'Ace', age: 36, subscribed: true, prefs: { theme: 'dark' } },
  attributes: { 'app:tags': ['a', 'b'] },
});
const profileTemplate = { free: ['data.prefs.theme'], open: ['data.prefs'], multipart: true };
const fresh = (headers: string[], params: Record<string, string>, body?: unknown, foreign?: Record<string, string>) =>
  async (): Promise<Target> => ({ headers, params, body, foreign });
const freshUser = async () => (await person()).userId;
const appForeign = { app: otherApp.id };
const platformProfile = (params: Record<string, string>, answer: Record<string, string>) => `/applications/${params.app}/users/${answer[names.userField] ?? params.user}/data`;
const meProfile = () => `/me/applications/${app.id}/data`;
/** A profile's PUT takes its read-only keys; its PATCH refuses them. */
const profileReadOnly = (method: string, read: ReadOnly['read']) =>
  method === 'PUT' ? { readOnly: { keys: PROFILE_READ_ONLY, read } } : { refusesReadOnly: PROFILE_READ_ONLY };

const templates: Template[] = [
  // Profiles, platform (the upserts come last).
  { method: 'DELETE', path: '/applications/:app/users/:user/data', setup: async () => ({ headers: appHeaders, params: { app: app.id, user: await freshUser() }, foreign: { ...appForeign, user: 'their-user' } }) },
  { method: 'POST', path: '/applications/:app/users/:user/state', setup: async () => ({ headers: appHeaders, params: { app: app.id, user: await freshUser() }, body: { state: 'disabled' }, foreign: { ...appForeign, user: 'their-user' } }) },
  ...([['age', 41], ['subscribed', false], ['prefs', { theme: 'light' }]] as const).map(([field, value]) => ({
    method: 'PUT', path: '/applications/:app/users/:user/data/fields/:field', variant: field, multipart: true, readBack: platformProfile, free: field === 'prefs' ? ['value.theme'] : [], open: ['value'],
    setup: async () => ({ headers: appHeaders, params: { app: app.id, user: await freshUser(), field }, body: { value }, foreign: { ...appForeign, user: 'their-user', field: 'no_such_field' } }),
  })),
  { method: 'POST', path: '/applications/:app/users/:user/signout', setup: async () => ({ headers: appHeaders, params: { app: app.id, user: await freshUser() }, body: { sign_out_all: true }, foreign: { ...appForeign, user: 'their-user' } }) },
  // Profiles and sessions, /me.
  ...(['PUT', 'PATCH'] as const).map((method) => ({
    method, path: '/me/applications/:app/data', ...profileTemplate, readBack: meProfile, ...profileReadOnly(method, meProfile),
    setup: async () => ({ headers: bearer((await person()).token), params: { app: app.id }, body: profileBody(), foreign: appForeign }),
  })),
  ...([['nickname', 'Ace'], ['age', 7]] as const).map(([field, value]) => ({
    method: 'PUT', path: '/me/applications/:app/data/fields/:field', variant: field, multipart: true, readBack: meProfile, textValue: field === 'nickname' ? (true as const) : undefined,
    setup: async () => ({ headers: bearer((await person()).token), params: { app: app.id, field }, body: { value }, foreign: { ...appForeign, field: 'no_such_field' } }),
  })),
  { method: 'PUT', path: '/me/meta', readBack: meProfile, setup: async () => ({ headers: bearer((await person()).token), params: {}, body: { last_passkey_registration_prompt: '2026-01-01T00:00:00Z' } }) },
  { method: 'POST', path: '/me/applications/:app/signout', setup: async () => ({ headers: bearer((await person()).token), params: { app: app.id }, body: { sign_out_all: false }, foreign: appForeign }) },
  { method: 'POST', path: '/me/auth/magic', setup: async () => ({ headers: bearer((await person()).token), params: {}, body: { redirect_url: redirect, expiration: '2h' } }) },
  // Groups, /me.
  { method: 'POST', path: '/me/groups', named: ['meta'], refusesReadOnly: GROUP_READ_ONLY, free: ['meta.k'], readBack: (p, a) => `/me/groups/${a.group.id}`, setup: async () => ({ headers: bearer((await person()).token), params: {}, body: { name: 'Crew', admission_policy: 'open', meta: { k: { n: 1 } } } }) },
  { method: 'PUT', path: '/me/groups/:group', named: ['meta'], free: ['meta.k'], readOnly: { keys: GROUP_READ_ONLY, moves: GROUP_MOVES, read: (p) => `/me/groups/${p.group}`, shown: (read) => read.group }, readBack: (p) => `/me/groups/${p.group}`, setup: async () => { const s = await groupScene(); return { headers: bearer(s.owner.token), params: { group: s.group }, body: { name: 'Renamed', admission_policy: 'invite_only', meta: { k: [1] } }, foreign: { group: otherGroup.id } }; } },
  { method: 'DELETE', path: '/me/groups/:group', setup: async () => { const s = await groupScene(); return { headers: bearer(s.owner.token), params: { group: s.group }, foreign: { group: s.memberId } }; } },
  { method: 'POST', path: '/me/groups/:group/members', refusesReadOnly: MEMBER_CREATE_REFUSES, setup: async () => { const s = await groupScene(); return { headers: bearer(s.owner.token), params: { group: s.group }, body: { user_id: s.outsider.userId, roles: ['editor'] }, foreign: { group: otherGroup.id } }; } },
  { method: 'POST', path: '/me/groups/:group/members', variant: 'a new address', refusesReadOnly: MEMBER_CREATE_REFUSES, setup: async () => { const s = await groupScene(); return { headers: bearer(s.owner.token), params: { group: s.group }, body: { email: `a${++serial}@example.com`, roles: ['editor'] }, foreign: { group: otherGroup.id } }; } },
  { method: 'PUT', path: '/me/groups/:group/members/:member', readOnly: { keys: MEMBER_READ_ONLY, moves: ['updated_at'], read: (p) => `/me/groups/${p.group}/members/${p.member}` }, setup: async () => { const s = await groupScene(); return { headers: bearer(s.owner.token), params: { group: s.group, member: s.memberId }, body: { roles: ['editor', 'admin'] }, foreign: { group: otherGroup.id, member: s.invite } }; } },
  { method: 'DELETE', path: '/me/groups/:group/members/:member', setup: async () => { const s = await groupScene(); return { headers: bearer(s.owner.token), params: { group: s.group, member: s.memberId }, foreign: { group: otherGroup.id, member: s.invite } }; } },
  { method: 'POST', path: '/me/groups/:group/invites', refusesReadOnly: INVITE_READ_ONLY, setup: async () => { const s = await groupScene(); return { headers: bearer(s.owner.token), params: { group: s.group }, body: { user_id: s.outsider.userId, roles: ['viewer'], redirect_url: '/welcome' }, foreign: { group: otherGroup.id } }; } },
  { method: 'POST', path: '/me/groups/:group/invites', variant: 'a new address', refusesReadOnly: INVITE_READ_ONLY, setup: async () => { const s = await groupScene(); return { headers: bearer(s.owner.token), params: { group: s.group }, body: { email: `a${++serial}@example.com`, roles: ['viewer'], redirect_url: '/welcome' }, foreign: { group: otherGroup.id } }; } },
  { method: 'PUT', path: '/me/groups/:group/invites/:invite', readOnly: { keys: INVITE_READ_ONLY, read: (p) => `/me/groups/${p.group}/invites/${p.invite}` }, setup: async () => { const s = await groupScene(); return { headers: bearer(s.owner.token), params: { group: s.group, invite: s.invite }, body: { roles: ['viewer', 'reader'] }, foreign: { group: otherGroup.id, invite: s.memberId } }; } },
  { method: 'DELETE', path: '/me/groups/:group/invites/:invite', setup: async () => { const s = await groupScene(); return { headers: bearer(s.owner.token), params: { group: s.group, invite: s.invite }, foreign: { group: otherGroup.id, invite: s.memberId } }; } },
  ...['accept', 'reject'].map((answer) => ({
    method: 'POST', path: `/me/groups/:group/invites/:invite/${answer}`,
    setup: async () => { const s = await groupScene(); return { headers: bearer(s.invitee.token), params: { group: s.group, invite: s.invite }, foreign: { group: otherGroup.id, invite: s.memberId } }; },
  })),
  // Groups, platform.
  { method: 'POST', path: '/applications/:app/groups', named: ['meta'], refusesReadOnly: GROUP_READ_ONLY, free: ['meta.k'], readBack: (p, a) => `/applications/${app.id}/groups/${a.id}`, setup: fresh(appHeaders, { app: app.id }, { name: 'Crew', admission_policy: 'invite_only', meta: { k: 'v' } }, appForeign) },
  { method: 'PUT', path: '/applications/:app/groups/:group', named: ['meta'], free: ['meta.k'], readBack: (p) => `/applications/${app.id}/groups/${p.group}`, readOnly: { keys: GROUP_READ_ONLY, moves: GROUP_MOVES, read: (p) => `/applications/${app.id}/groups/${p.group}` }, setup: async () => { const s = await groupScene(); return { headers: appHeaders, params: { app: app.id, group: s.group }, body: { name: 'Renamed', meta: { k: 2 } }, foreign: { app: otherApp.id, group: otherGroup.id } }; } },
  { method: 'DELETE', path: '/applications/:app/groups/:group', setup: async () => { const s = await groupScene(); return { headers: appHeaders, params: { app: app.id, group: s.group }, foreign: { app: otherApp.id, group: otherGroup.id } }; } },
  { method: 'POST', path: '/applications/:app/groups/:group/members', refusesReadOnly: MEMBER_CREATE_REFUSES, setup: async () => { const s = await groupScene(); return { headers: appHeaders, params: { app: app.id, group: s.group }, body: { user_id: s.outsider.userId, roles: ['editor'], state: 'active' }, foreign: { app: otherApp.id, group: otherGroup.id } }; } },
  { method: 'POST', path: '/applications/:app/groups/:group/members', variant: 'a new address', refusesReadOnly: MEMBER_CREATE_REFUSES, setup: async () => { const s = await groupScene(); return { headers: appHeaders, params: { app: app.id, group: s.group }, body: { email: `a${++serial}@example.com`, roles: ['editor'], state: 'active' }, foreign: { app: otherApp.id, group: otherGroup.id } }; } },
  { method: 'PUT', path: '/applications/:app/groups/:group/members/:member', readBack: (p) => `/applications/${app.id}/groups/${p.group}/members/${p.member}`, readOnly: { keys: MEMBER_READ_ONLY, moves: ['updated_at'], read: (p) => `/applications/${app.id}/groups/${p.group}/members/${p.member}` }, setup: async () => { const s = await groupScene(); return { headers: appHeaders, params: { app: app.id, group: s.group, member: s.memberId }, body: { roles: ['admin'] }, foreign: { app: otherApp.id, group: otherGroup.id, member: s.invite } }; } },
  { method: 'DELETE', path: '/applications/:app/groups/:group/members/:member', setup: async () => { const s = await groupScene(); return { headers: appHeaders, params: { app: app.id, group: s.group, member: s.memberId }, foreign: { app: otherApp.id, group: otherGroup.id, member: s.invite } }; } },
  { method: 'POST', path: '/applications/:app/groups/:group/invites', refusesReadOnly: INVITE_READ_ONLY, setup: async () => { const s = await groupScene(); return { headers: appHeaders, params: { app: app.id, group: s.group }, body: { email: `i${++serial}@example.com`, roles: ['viewer'], redirect_url: redirect, app_variant_id: 'web' }, foreign: { app: otherApp.id, group: otherGroup.id } }; } },
  { method: 'PUT', path: '/applications/:app/groups/:group/invites/:invite', readBack: (p) => `/applications/${app.id}/groups/${p.group}/invites/${p.invite}`, readOnly: { keys: INVITE_READ_ONLY, read: (p) => `/applications/${app.id}/groups/${p.group}/invites/${p.invite}` }, setup: async () => { const s = await groupScene(); return { headers: appHeaders, params: { app: app.id, group: s.group, invite: s.invite }, body: { roles: ['reader'], user_id: s.invitee.userId, app_variant_id: 'web' }, foreign: { app: otherApp.id, group: otherGroup.id, invite: s.memberId } }; } },
  { method: 'DELETE', path: '/applications/:app/groups/:group/invites/:invite', setup: async () => { const s = await groupScene(); return { headers: appHeaders, params: { app: app.id, group: s.group, invite: s.invite }, foreign: { app: otherApp.id, group: otherGroup.id, invite: s.memberId } }; } },
  // OIDC clients.
  { method: 'POST', path: '/applications/:app/oidc-clients', named: ['config'], free: ['config.custom'], readBack: (p, a) => `/applications/${app.id}/oidc-clients/${a.id}`, setup: fresh(appHeaders, { app: app.id }, { name: 'Web', description: 'd', config: { redirect_uris: [redirect], hub_show_logos: false, hub_dark_mode: 'enabled', custom: { a: 1 } } }, appForeign) },
  ...(['PUT', 'DELETE'] as const).map((method) => ({
    method, path: '/applications/:app/oidc-clients/:client', named: ['config'], free: ['config.custom'],
    readOnly: method === 'PUT' ? { keys: CLIENT_READ_ONLY, moves: ['updated_at'], read: (p: Record<string, string>) => `/applications/${app.id}/oidc-clients/${p.client}` } : undefined,
    setup: async () => {
      const client = await platform('POST', '/oidc-clients', { name: 'Web' });
      const body = method === 'PUT' ? { name: 'Web 2', config: { allowed_origins: ['https://app.example'], is_pkce_supported: true, custom: [1] } } : undefined;
      return { headers: appHeaders, params: { app: app.id, client: client.id }, body, foreign: { app: otherApp.id, client: seededClient.credentials[0].client_id } };
    },
  })),
  { method: 'POST', path: '/applications/:app/oidc-clients/:client/credentials', setup: async () => { const client = await platform('POST', '/oidc-clients', { name: 'Web' }); return { headers: appHeaders, params: { app: app.id, client: client.id }, body: { name: 'Key', app_variant_id: 'web', expires: '2026-06-01T00:00:00Z' }, foreign: { app: otherApp.id, client: otherGroup.id } }; } },
  { method: 'DELETE', path: '/applications/:app/oidc-clients/:client/credentials/:client_id', setup: async () => { const client = await platform('POST', '/oidc-clients', { name: 'Web' }); return { headers: appHeaders, params: { app: app.id, client: client.id, client_id: client.credentials[0].client_id }, foreign: { app: otherApp.id, client: seededClient.id, client_id: seededClient.credentials[0].client_id } }; } },
  // Admin.
  { method: 'POST', path: '/admin/applications', named: ['schema.fields'], setup: fresh(adminHeaders, {}, { name: 'Made', schema: { fields: { f: { type: 'string', user_readable: true } }, allow_unknown_fields: false } }) },
  { method: 'PATCH', path: '/admin/applications/:app', named: ['schema.fields'], creates: ['app'], readBack: (p) => `/admin/applications/${p.app}`, setup: async () => { const made = await deps.apps.create('patched'); return { headers: adminHeaders, params: { app: made.id }, body: { name: 'Patched', schema: { fields: { n: { type: 'number' } } } }, foreign: { app: otherGroup.id } }; } },
  { method: 'POST', path: '/admin/applications/:app/credentials', creates: ['app'], setup: fresh(adminHeaders, { app: otherApp.id }, undefined, { app: otherGroup.id }) },
  { method: 'DELETE', path: '/admin/applications/:app/credentials/:key', setup: async () => { const c = await deps.apps.createCredential(otherApp.id); return { headers: adminHeaders, params: { app: otherApp.id, key: c.key }, foreign: { app: app.id, key: app.key } }; } },
  // Sign-in.
  {
    method: 'POST', path: '/hub/auth/magic', variant: 'a new address',
    setup: async () => {
      const open = await platform('POST', '/groups', { name: 'Open', admission_policy: 'open' });
      return { headers: appHeaders, params: {}, body: { verification_type: 'email', data: { email: `l${++serial}@example.com`, nickname: 'L', age: 3 }, redirect_url: redirect, expiration: '1h', group_to_join: open.id } };
    },
  },
  { method: 'POST', path: '/hub/auth/magic', variant: 'a new user ID', setup: async () => ({ headers: appHeaders, params: {}, body: { verification_mode: 'phone', user_id: `ext-${++serial}`, data: { phone_number: '+15551234567' }, expiration: '30d' } }) },
  {
    method: 'POST', path: '/hub/auth/token', public: true,
    setup: async () => {
      const made = await ok(server.request('POST', '/hub/auth/magic', { app, body: { verification_type: 'email', data: { email: `r${++serial}@example.com` } } }), 'link');
      const signedIn = await ok(server.request('GET', linkPath(made.link)), 'redeem');
      return { headers: [], params: {}, body: { refresh_token: signedIn.refresh_token, grant_type: 'refresh_token', client_id: 'web' } };
    },
  },
  {
    method: 'GET', path: '/hub/auth/magic/:id', ignoresQuery: true, public: true,
    setup: async () => {
      const made = await ok(server.request('POST', '/hub/auth/magic', { app, body: { verification_type: 'email', data: { email: `m${++serial}@example.com` } } }), 'link');
      return { headers: ['accept: application/json'], params: { id: linkPath(made.link).split('/').pop()! }, foreign: { id: seededClient.id } };
    },
  },
  // Last: an upsert may create the users other routes name as unknown (`__proto__`, another app's user's ID).
  ...(['PUT', 'PATCH'] as const).map((method) => ({
    method, path: '/applications/:app/users/:user/data', ...profileTemplate, creates: ['user'], readBack: platformProfile, ...profileReadOnly(method, (p) => platformProfile(p, {})),
    setup: async () => ({ headers: appHeaders, params: { app: app.id, user: await freshUser() }, body: profileBody(), foreign: { ...appForeign, user: 'their-user' } }),
  })),
  {
    method: 'PUT', path: '/applications/:app/users/:user/data', variant: 'an app taking any field', open: ['data'], free: ['data.note'], multipart: true, creates: ['user'], readBack: platformProfile,
    setup: async () => ({ headers: openHeaders, params: { app: openApp.id, user: `o${++serial}` }, body: { data: { note: 'n' } }, foreign: { app: app.id, user: 'their-user' } }),
  },
];

// ── Mutations ──────────────────────────────────────────────────────────────────────────────────────

interface Mutation {
  label: string;
  /** Whether every reading of the docs refuses it (else it may pass, and is only held to the other checks). */
  refuse: boolean;
  params?: Record<string, string>;
  query?: string;
  contentType?: string | null;
  headers?: string[];
  /** Sent after the others. */
  extraHeaders?: string[];
  /** The body as sent; `undefined` keeps the valid one. */
  body?: Buffer;
  /** Framed in small chunks (`transfer-encoding: chunked`) instead of by `content-length`. */
  chunked?: true;
  /** Read-only keys the body gives, with their values: an accepted write left what they name as it was. */
  readOnly?: Record<string, unknown>;
}

type Path = (string | number)[];
const MARK = '\u0001mark\u0001';
const dotted = (path: Path) => path.join('.');
const jsonType = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** Every value of `body` with its path: the root, each object and array, each leaf. */
function valuesOf(value: unknown, path: Path = []): Array<[Path, unknown]> {
  const here: Array<[Path, unknown]> = [[path, value]];
  if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) here.push(...valuesOf(child, [...path, Array.isArray(value) ? Number(key) : key]));
  }
  return here;
}

/** JSON text of `value` with a placeholder at `path` (the root too), then `raw` in its place (text or bytes, even no valid JSON). */
function marked(value: unknown, path: Path, place: (holder: any, key: string | number) => void, raw: string | Buffer): Buffer {
  let text: string;
  if (path.length === 0 && typeof raw !== 'string') text = JSON.stringify(MARK);
  else if (path.length === 0) return Buffer.from(raw);
  else {
    const copy = JSON.parse(JSON.stringify(value));
    let holder = copy;
    for (const step of path.slice(0, -1)) holder = holder[step];
    place(holder, path[path.length - 1]);
    text = JSON.stringify(copy);
  }
  const [head, tail] = text.split(JSON.stringify(MARK));
  return Buffer.concat([Buffer.from(head), Buffer.from(raw), Buffer.from(tail)]);
}

/** `value` as JSON text with what is at `path` replaced by `raw`. */
const withRaw = (value: unknown, path: Path, raw: string | Buffer) => marked(value, path, (holder, key) => (holder[key] = MARK), raw);

/** `value` as JSON text with `key: raw` added to the object at `path`. */
const withKey = (value: unknown, path: Path, key: string, raw: string | Buffer) =>
  marked(value, [...path, key], (holder) => Object.defineProperty(holder, key, { value: MARK, enumerable: true, writable: true, configurable: true }), raw);

const under = (path: Path, prefixes: string[] = []) => prefixes.some((p) => dotted(path) === p || dotted(path).startsWith(`${p}.`));

const wrongTypeValues: unknown[] = [12345, true, 'text', {}, [], ['text']];
const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
/** Strings whose bytes are not UTF-8: a lone byte, an overlong slash, an encoded surrogate, a cut sequence. */
const notUtf8 = [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82]].map((bytes) => Buffer.concat([Buffer.from('"a'), Buffer.from(bytes), Buffer.from('"')]));

/** Values that break the rule of what `value` is (an address, a URL, a date, a choice), each as JSON text. */
function invalidLike(key: string, value: string): string[] {
  const texts: string[] = [];
  if (value.includes('@')) texts.push('a@b@example.com', 'a,b@example.com', `${'m'.repeat(250)}@example.com`, 'a@example.com\u0085', 'a b@example.com');
  if (/^\+\d+$/.test(value)) texts.push('+', '12', `+1${'5'.repeat(40)}`, '+1-555-abc');
  if (/^https?:/.test(value)) {
    texts.push('javascript:alert(1)', 'https://user:pw@app.example/cb', 'https:///app.example/cb', 'https://app.example\\@evil.example/cb', '//evil.example/cb', `https://app.example/${'p'.repeat(2100)}`);
    if (/^https?:\/\/[^/]+$/.test(value)) texts.push(`${value}/`, value.toUpperCase(), 'https://*.example');
  }
  if (value.startsWith('/')) texts.push('/\\evil.example', '//evil.example', 'javascript:alert(1)');
  if (/^\d{4}-\d\d-\d\dT/.test(value)) texts.push('2026-02-30T00:00:00Z', '2026-01-01T24:00:00Z', '9999-12-31T23:59:59-01:00', '2026-01-01T00:00:00', '2026-13-01T00:00:00Z');
  if (key === 'expiration') texts.push('0h', '31d', '1.5h', '-1h', '1w', '1H');
  if (['admission_policy', 'state', 'verification_type', 'verification_mode', 'hub_dark_mode', 'grant_type', 'type'].includes(key)) {
    texts.push(value.toUpperCase(), `${value} `, `${value}\u0000`);
  }
  return texts.map((text) => JSON.stringify(text));
}

/** A change to the JSON value at `path`, as the JSON text of the value it is made in. */
interface BodyEdit {
  label: string;
  refuse: boolean;
  path: Path;
  edit: (value: unknown, path: Path) => Buffer;
  /** About the JSON body as one text (a multipart part is a JSON text of its own, one level less deep). */
  jsonOnly?: true;
}

function bodyEdits(template: Template, body: unknown): BodyEdit[] {
  const found: BodyEdit[] = [];
  const free = (path: Path) => under(path, template.free);
  for (const [path, value] of valuesOf(body)) {
    const at = dotted(path) || 'body';
    const key = path[path.length - 1];
    const replace = (shown: string, refuse: boolean, raw: string | Buffer) =>
      found.push({ label: `${at} = ${shown}`, refuse, path, edit: (v, p) => withRaw(v, p, raw) });
    for (const wrong of wrongTypeValues.filter((w) => jsonType(w) !== jsonType(value))) replace(JSON.stringify(wrong), !free(path), JSON.stringify(wrong));
    // null removes a value in places (a profile field, an attribute): refused for certain only as the body.
    replace('null', path.length === 0, 'null');
    for (const n of ['1e400', '-1e400', '1' + '0'.repeat(400)]) replace(n.slice(0, 12), true, n);
    replace('nested 100 deep', true, nested(100));
    if (free(path) && path.length < 64) {
      // The root is level 1: arrays nested n deep at a path of length L reach level L + n.
      for (const level of [64, 65]) {
        found.push({ label: `${at} nested to level ${level}`, refuse: level > 64, path, jsonOnly: true, edit: (v, p) => withRaw(v, p, nested(level - path.length)) });
      }
    }
    replace('a lone surrogate', true, '"a\\ud800b"');
    replace('a lone low surrogate', true, '"\\udc00"');
    replace('70 000 characters', true, JSON.stringify('x'.repeat(70_000)));
    notUtf8.forEach((bytes, i) => replace(`bytes that are not UTF-8 (${i})`, true, bytes));
    if (typeof value === 'number') {
      for (const n of ['1e308', '-1', '-0', '9007199254740993', '0.5', '1e-400']) replace(n, false, n);
      for (const n of ['"NaN"', '"Infinity"', '"42"']) replace(n, !free(path), n);
    }
    if (typeof value === 'string') {
      for (const text of ['""', '"   "', '"a\\u0000b\\u001f\\u007f\\u0085"', '"NaN"', '"\\ud83d\\ude00"', '"\\u2028\\ufeff"', '"e\\u0301"']) replace(text, false, text);
      if (!free(path)) for (const text of invalidLike(String(key), value)) replace(text.slice(0, 60), true, text);
    }
    if (Array.isArray(value) && !free(path)) {
      const many = Array.from({ length: 200 }, (_, i) => (typeof value[0] === 'string' ? `${value[0]}-${i}` : value[0] ?? i));
      replace('200 entries', true, JSON.stringify(many));
    }
    if (typeof key === 'string') {
      const wrong = jsonType(value) === 'number' ? '"text"' : '12345';
      const twice = (label: string, refuse: boolean, first: string, last: string) =>
        found.push({ label: `${at} given twice, ${label}`, refuse, path, edit: (v, p) => withRaw(v, p, `${first},${JSON.stringify(key)}:${last}`) });
      // JSON.parse keeps the last of duplicate keys.
      twice('the wrong one last', !free(path), JSON.stringify(value), wrong);
      twice('the right one last', false, wrong, JSON.stringify(value));
    }
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const namedHere = (template.named ?? []).includes(dotted(path));
      const belowNamed = under(path, template.named);
      const strict = !namedHere && !free(path) && !under(path, template.open);
      const keys: Array<[string, boolean]> = [
        ['__proto__', strict || belowNamed],
        ['constructor', strict || namedHere],
        ['prototype', strict || namedHere],
        ['fuzz_unknown', strict],
        ['', strict],
        ['k'.repeat(300), strict],
        ['a\u0000b', strict],
        // JSON.stringify writes a lone surrogate as an escape: the key arrives as `"a\udc00"`.
        ['a\udc00', true],
      ];
      for (const [added, refuse] of keys) {
        found.push({ label: `${at} gains key ${JSON.stringify(added).slice(0, 20)}`, refuse, path, edit: (v, p) => withKey(v, p, added, '{"x":1}') });
      }
      // Keys no caller of the route may write: reserved attribute namespaces (the brand's is the app's), another
      // user ID. `svc_user` in `data` is a field name like any other: refused where unknown fields are.
      const reserved: Array<[string, string, boolean]> =
        at === 'attributes'
          ? [['svc:x', '["a"]', template.path.startsWith('/me')], ['SVC:app_variants', '["a"]', template.path.startsWith('/me')], ['system:x', '["a"]', true], ['Svc:x', 'null', false]]
          : at === 'data'
            ? [['user_id', '"someone-else"', true], ['svc_user', '"x"', strict]]
            : [];
      for (const [added, raw, refuse] of reserved) found.push({ label: `${at}.${added} = ${raw}`, refuse, path, edit: (v, p) => withKey(v, p, added, raw) });
      const placeholder = JSON.stringify('\u0002key\u0002');
      found.push({
        label: `${at} gains a key that is not UTF-8`, refuse: true, path,
        edit: (v, p) => {
          const [head, tail] = withKey(v, p, '\u0002key\u0002', '1').toString().split(placeholder);
          return Buffer.concat([Buffer.from(head), notUtf8[0], Buffer.from(tail)]);
        },
      });
    }
  }
  return found;
}

/** A text part of a multipart body: JSON, but a string as itself where the route reads text (a string field's `value`). */
const partText = (template: Template, value: unknown) => (typeof value === 'string' && template.textValue ? value : JSON.stringify(value));

/** Each top-level field of `body` as a multipart text part. */
const textParts = (template: Template, body: Record<string, unknown>) =>
  Object.entries(body).map(([name, value]) => `Content-Disposition: form-data; name="${name}"\r\n\r\n${partText(template, value)}`);

/** Whether `value` has something at `path`. */
const reaches = (value: unknown, path: Path): boolean =>
  path.length === 0 || (!!value && typeof value === 'object' && Object.hasOwn(value, path[0]) && reaches((value as any)[path[0]], path.slice(1)));

/**
 * Each edit made beside one that may pass, elsewhere in the body (picked by position, so the same
 * edits pair up on a fresh target): a refused request is refused whole, an accepted one keeps both.
 */
function pairedEdits(edits: BodyEdit[], body: unknown): BodyEdit[] {
  const passing = edits.filter((e) => !e.refuse && !e.jsonOnly && e.path.length > 0);
  const pairs: BodyEdit[] = [];
  edits.forEach((second, i) => {
    const first = passing[(i * 7) % Math.max(1, passing.length)];
    if (!first || second.path.length === 0 || under(second.path, [dotted(first.path)]) || under(first.path, [dotted(second.path)])) return;
    let edited: unknown;
    try {
      edited = JSON.parse(first.edit(body, first.path).toString('utf8'));
    } catch {
      return;
    }
    if (!reaches(edited, second.path)) return;
    pairs.push({ ...second, label: `${second.label}, and ${first.label}`, jsonOnly: true, edit: (_v, p) => second.edit(edited, p) });
  });
  return pairs;
}

function bodyMutations(template: Template, body: unknown, edits: BodyEdit[]): Mutation[] {
  const found: Mutation[] = [];
  for (const { label, refuse, path, edit, jsonOnly } of edits) {
    found.push({ label, refuse, body: edit(body, path) });
    // The same change in the multipart form of the body, where each top-level field is a part.
    if (!template.multipart || jsonOnly || path.length === 0 || (path.length === 1 && template.textValue)) continue;
    const parts = Object.entries(body as Record<string, unknown>).map(([name, value]) => {
      const text = name === path[0] ? edit(value, path.slice(1)) : Buffer.from(partText(template, value));
      return Buffer.concat([Buffer.from(`Content-Disposition: form-data; name="${name}"\r\n\r\n`), text]);
    });
    // A profile write sends files beside: a refused one stores none of them.
    const files = path[0] === 'data' || path[0] === 'attributes' ? [filePart('avatar', 'image/png', tinyPng), filePart('contract', 'text/plain', Buffer.from('terms'))] : [];
    found.push({ label: `${label} (multipart)`, refuse, contentType: MULTIPART, body: multipart([...parts, ...files]) });
  }
  return found;
}

const multipart = (parts: Array<string | Buffer>, closed = true) =>
  Buffer.concat([...parts.flatMap((p) => [Buffer.from('--FuzZ\r\n'), Buffer.from(p), Buffer.from('\r\n')]), Buffer.from(closed ? '--FuzZ--\r\n' : '')]);
const MULTIPART = 'multipart/form-data; boundary=FuzZ';

const filePart = (name: string, type: string, bytes: Buffer, filename = 'f.bin') =>
  Buffer.concat([Buffer.from(`Content-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`), bytes]);
const tinyPng = await sharp({ create: { width: 2, height: 2, channels: 3, background: '#c00' } }).png().toBuffer();

/** The first bytes of a PNG of this size: enough for its header to be read, not to decode. */
function pngHeader(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  const chunk = Buffer.concat([Buffer.from('IHDR'), ihdr]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(13);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(chunk));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), length, chunk, crc]);
}

function otherMutations(template: Template, target: Target): Mutation[] {
  const found: Mutation[] = [];
  const hasBody = target.body !== undefined;
  if (hasBody) {
    const form = template.path === '/hub/auth/token';
    const contentTypes: Array<[string | null, boolean]> = [
      [null, true], ['text/plain', true], ['application/x-www-form-urlencoded', true], [MULTIPART, !template.multipart], ['application/jsonx', true],
      ['application/json; charset=utf-8', false], ['Application/JSON', false], ['application/json;;', false], ['application/json, text/plain', false],
    ];
    for (const [contentType, refuse] of contentTypes) found.push({ label: `content-type ${contentType ?? 'missing'}`, refuse, contentType });
    found.push({ label: 'content-type given twice', refuse: true, extraHeaders: ['content-type: application/json'] });
    found.push({ label: 'a content coding', refuse: true, extraHeaders: ['content-encoding: gzip'] });
    found.push({ label: 'the body in chunks', refuse: false, chunked: true });
    found.push({ label: 'an array body in chunks', refuse: true, chunked: true, body: Buffer.from(`[${JSON.stringify(target.body)}]`) });
    if (form) {
      const token = encodeURIComponent((target.body as { refresh_token: string }).refresh_token);
      const forms: Array<[string, boolean, Buffer]> = [
        ['a form body', false, Buffer.from(`refresh_token=${token}`)],
        ['a form body with malformed percent-encoding', true, Buffer.from(`refresh_token=${token}%ZZ`)],
        ['a form body naming a field twice', true, Buffer.from(`refresh_token=${token}&refresh_token=${token}`)],
        ['a form body with another grant type', true, Buffer.from(`grant_type=password&refresh_token=${token}`)],
        ['a form body that is not UTF-8', true, Buffer.concat([Buffer.from(`refresh_token=${token}`), notUtf8[0]])],
        // A form ignores a parameter it does not know (API.md, RFC 6749 §3.2), __proto__ too: it stays a field.
        ['a form body with a field __proto__', false, Buffer.from(`refresh_token=${token}&__proto__=1`)],
      ];
      for (const [label, refuse, body] of forms) found.push({ label, refuse, body, contentType: 'application/x-www-form-urlencoded' });
    }
  } else if (template.method !== 'GET') {
    // A route whose body carries nothing: a POST refuses any field (docs/API.md); a DELETE may ignore it.
    found.push({ label: 'a body with a field', refuse: template.method === 'POST', body: Buffer.from('{"fuzz_unknown":1}'), contentType: 'application/json' });
    found.push({ label: 'an empty JSON object', refuse: false, body: Buffer.from('{}'), contentType: 'application/json' });
  }
  if (template.multipart) {
    const part = (name: string, value: string) => `Content-Disposition: form-data; name="${name}"\r\n\r\n${value}`;
    const first = Object.keys(target.body as object)[0];
    const valid = part(first, partText(template, (target.body as Record<string, unknown>)[first]));
    found.push({ label: 'multipart cut before its closing boundary', refuse: true, contentType: MULTIPART, body: multipart([valid], false) });
    found.push({ label: 'multipart with a part named __proto__', refuse: true, contentType: MULTIPART, body: multipart([valid, part('__proto__', '{}')]) });
    found.push({ label: 'multipart with a part given twice', refuse: true, contentType: MULTIPART, body: multipart([valid, valid]) });
    found.push({ label: 'multipart part without headers', refuse: true, contentType: MULTIPART, body: multipart([`\r\n${'x'}`]) });
    found.push({ label: 'multipart without a boundary parameter', refuse: true, contentType: 'multipart/form-data', body: multipart([valid]) });
    const fileParts: Array<[string, boolean, Buffer]> = first === 'value'
      ? [['a file as the value of a field that takes none', true, filePart('value', 'image/png', pngHeader(1, 1))]]
      : [
          ['an image part that is no image', true, filePart('avatar', 'image/png', Buffer.from('not an image'))],
          ['an image part of 100 000 × 100 000 pixels', true, filePart('avatar', 'image/png', pngHeader(100_000, 100_000))],
          ['an image part cut in half', true, filePart('avatar', 'image/png', tinyPng.subarray(0, tinyPng.length >> 1))],
          ['an empty image part', true, filePart('avatar', 'image/png', Buffer.alloc(0))],
          ['an image part of 0 × 0 pixels', true, filePart('avatar', 'image/png', pngHeader(0, 0))],
          ['an image part that is a JPEG header alone', true, filePart('avatar', 'image/jpeg', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0]))],
          ['a GIF header of 65 535 × 65 535 pixels', true, filePart('avatar', 'image/gif', Buffer.concat([Buffer.from('GIF89a'), Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0])]))],
          ['a TIFF header alone', true, filePart('avatar', 'image/tiff', Buffer.from([0x49, 0x49, 0x2a, 0, 8, 0, 0, 0]))],
          ['a valid image labelled as text', true, filePart('avatar', 'text/plain', tinyPng)],
          ['a valid image labelled as no image', true, filePart('avatar', 'application/octet-stream', tinyPng)],
          ['a valid image', false, filePart('avatar', 'image/webp', tinyPng)],
          ['an SVG image part', true, filePart('avatar', 'image/svg+xml', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))],
          ['a file part whose content type is no media type', true, filePart('contract', 'not a type', Buffer.from('x'))],
          ['a file part for a string field', true, filePart('nickname', 'text/plain', Buffer.from('x'))],
          ['a file part for an unknown field', true, filePart('fuzz_unknown', 'text/plain', Buffer.from('x'))],
          ['a file part named __proto__', true, filePart('__proto__', 'text/plain', Buffer.from('x'))],
          ['a file part with a control character in its filename', false, filePart('contract', 'text/plain', Buffer.from('x'), 'a\u0001b\u00ff.txt')],
          ['a file part holding the boundary', false, filePart('contract', 'text/plain', Buffer.from('--FuzZ is not the end'))],
          ['a file part', false, filePart('contract', 'application/pdf', Buffer.from('%PDF-1.4'))],
        ];
    for (const [label, refuse, part] of fileParts) found.push({ label: `multipart: ${label}`, refuse, contentType: MULTIPART, body: multipart([valid, part]) });
  }
  for (const query of ['?fuzz=1', '?update_integrations=maybe', '?page_size=-1', '?page_size=NaN', '?a=%', '?update_integrations=true&update_integrations=true', `?${'q'.repeat(3000)}=1`, '?%00=%00']) {
    found.push({ label: `query ${query.slice(0, 40)}`, refuse: !template.ignoresQuery, query });
  }
  if (!template.public) {
    found.push({ label: 'no credentials', refuse: true, headers: [] });
    found.push({ label: 'the credentials given twice', refuse: true, extraHeaders: target.headers });
    if (target.params.app) found.push({ label: 'the credentials of the other app', refuse: true, headers: [`${names.appKeyHeader}: ${otherCredential.key}`, `${names.appSecretHeader}: ${otherCredential.secret}`] });
  }
  for (const param of Object.keys(target.params)) {
    const creates = template.creates?.includes(param) ?? false;
    const candidates: Array<[string, string, boolean]> = [
      ['3000 characters', 'z'.repeat(3000), true],
      ['129 characters', 'y'.repeat(129), true],
      ['empty', '', true],
      ['malformed percent-encoding', '%E0%A4%A', true],
      ['a percent-encoded slash', 'a%2Fb', true],
      ['__proto__', '__proto__', !creates],
      ['constructor', 'constructor', !creates],
      ['a lone surrogate, percent-encoded', '%ED%A0%80', true],
      // No new user takes `.` or `..` as its ID (API.md, IDs).
      ['.', '.', !creates || param === 'user'],
      ['..', '..', !creates || param === 'user'],
      ['in upper case', target.params[param].toUpperCase(), !creates],
      ['with a space after it', `${target.params[param]}%20`, true],
    ];
    if (target.foreign?.[param]) candidates.push(['of another kind or app', target.foreign[param], !creates]);
    if (ofAnotherGroup[param]) candidates.push(['of another group', ofAnotherGroup[param], true]);
    for (const [what, value, refuse] of candidates) {
      found.push({ label: `:${param} ${what}`, refuse, params: { ...target.params, [param]: value } });
    }
  }
  return found;
}

// ── The input rules of round 19 ────────────────────────────────────────────────────────────────────

/** A stream of its own for each label, so a fresh target's mutations (found again by label) hold the same values. */
const streamOf = (label: string) => labelledRandom(seed, label);

/** Bidirectional controls and line separators: refused in names, emails, field names and attribute keys. */
const MISLEADING = ['\u061c', '\u200e', '\u200f', '\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u2028', '\u2029'];
const oneOf = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)];
const codePoint = (text: string) => `U+${text.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

function randomText(random: () => number): string {
  const pieces = ['a', 'Z', '7', ' ', '.', '..', '@', ':', '"', '\\', 'é', 'e\u0301', '\ud83d\ude00', '\u0000', '\u0085', '__proto__', ...MISLEADING];
  return Array.from({ length: Math.floor(random() * 8) }, () => oneOf(random, pieces)).join('');
}

/** Any JSON value, a few levels deep at most. */
function randomJson(random: () => number, depth = 0): unknown {
  const kinds = depth < 2 ? 8 : 6;
  switch (Math.floor(random() * kinds)) {
    case 0: return null;
    case 1: return random() < 0.5;
    case 2: return oneOf(random, [0, -1, 1.5, 1e308, 2 ** 53 + 2, Math.floor(random() * 1e9)]);
    case 3: case 4: return randomText(random);
    case 5: return oneOf(random, ['2030-01-01T00:00:00.000Z', 'active', 'disabled', 'accepted', 'user_01J00000000000000000000000', `app:${otherApp.id}`]);
    case 6: return Array.from({ length: Math.floor(random() * 3) }, () => randomJson(random, depth + 1));
    default: return Object.fromEntries(Array.from({ length: Math.floor(random() * 3) }, () => [randomText(random), randomJson(random, depth + 1)]));
  }
}

/** A value a caller could mean for a read-only key: another real ID, another state, another time. */
function meantFor(key: string): unknown {
  if (key === 'state') return 'disabled';
  if (key.endsWith('_at')) return '2030-01-01T00:00:00.000Z';
  if (key === 'member_count' || key === 'auth_level') return 3;
  if (key === 'groups' || key === 'credentials') return [{ id: elsewhere.group }];
  if (['meta', 'verified_data', 'profile', 'connection_map'].includes(key)) return { email: 'x@example.com', created: '2030-01-01T00:00:00.000Z' };
  if (key === 'user_lookup_value') return 'x@example.com';
  if (key === 'group_id') return elsewhere.group;
  if (key === 'app_id') return otherApp.id;
  return key === 'id' ? elsewhere.memberId : elsewhere.outsider.userId;
}

/** Read-only keys in the body, of a PUT (taken, ignored: it must change nothing they name) or of a body that refuses them. */
function readOnlyMutations(template: Template, target: Target): Mutation[] {
  const keys = template.readOnly?.keys ?? template.refusesReadOnly;
  if (!keys || !isPlainObject(target.body)) return [];
  const body = target.body;
  const refuse = !template.readOnly;
  const found: Mutation[] = [];
  const giving = (label: string, values: Record<string, unknown>) => found.push({ label, refuse, readOnly: values, body: Buffer.from(JSON.stringify({ ...body, ...values })) });
  for (const key of keys) {
    giving(`read-only ${key}, a value meant for it`, { [key]: meantFor(key) });
    const label = `read-only ${key}, a random value`;
    giving(label, { [key]: randomJson(streamOf(label)) });
    // No read answers multipart: a part named so is unknown (API.md, User profiles).
    if (template.multipart && !('value' in body)) {
      found.push({ label: `a multipart part named ${key}`, refuse: true, contentType: MULTIPART, body: multipart([...textParts(template, { ...body, [key]: meantFor(key) })]) });
    }
  }
  const random = streamOf('every read-only key');
  giving('every read-only key, random values', Object.fromEntries(keys.map((key) => [key, randomJson(random)])));
  return found;
}

/** `text` with a misleading character inside it (not at an end: trimming would take a line separator away). */
function misleadingIn(label: string, text: string): [string, string] {
  const random = streamOf(label);
  const character = oneOf(random, MISLEADING);
  const at = 1 + Math.floor(random() * Math.max(1, text.length - 1));
  return [`${label} (${codePoint(character)})`, text.slice(0, at) + character + text.slice(at)];
}

/** Where a body names fields by its keys, with a value each may take: a profile's `data`, a schema's `fields`. */
function fieldNamesIn(body: unknown): Array<[Path, string]> {
  if (!isPlainObject(body)) return [];
  const schema = body.schema;
  return [
    ...(isPlainObject(body.data) ? [[['data'], '"x"'] as [Path, string]] : []),
    ...(isPlainObject(schema) && isPlainObject(schema.fields) ? [[['schema', 'fields'], '{"type":"string"}'] as [Path, string]] : []),
  ];
}

/** Names and emails holding a bidirectional control or line separator, and field names and attribute keys too: all refused. */
function misleadingEdits(body: unknown): BodyEdit[] {
  const found: BodyEdit[] = [];
  for (const [path, value] of valuesOf(body)) {
    const key = path[path.length - 1];
    const named = key === 'name' || key === 'email' || path[path.length - 2] === 'roles';
    if (typeof value !== 'string' || !named) continue;
    const [label, text] = misleadingIn(`${dotted(path)} holding a misleading character`, value);
    found.push({ label, refuse: true, path, edit: (v, p) => withRaw(v, p, JSON.stringify(text)) });
  }
  if (!isPlainObject(body)) return found;
  if (isPlainObject(body.config)) {
    const [label, title] = misleadingIn('config.hub_title holding a misleading character', 'Sign in');
    found.push({ label, refuse: true, path: ['config', 'hub_title'], edit: (v, p) => withKey(v, p.slice(0, -1), 'hub_title', JSON.stringify(title)) });
  }
  for (const [at, raw] of fieldNamesIn(body)) {
    const [label, name] = misleadingIn(`a field name in ${dotted(at)} holding a misleading character`, 'nickname');
    found.push({ label, refuse: true, path: [...at, name], edit: (v, p) => withKey(v, p.slice(0, -1), name, raw) });
  }
  if (isPlainObject(body.attributes)) {
    const [label, name] = misleadingIn('an attribute key holding a misleading character', 'app:tag');
    found.push({ label, refuse: true, path: ['attributes', name], edit: (v, p) => withKey(v, p.slice(0, -1), name, '["a"]') });
  }
  return found;
}

/** `.` and `..` as a user ID a body names and as a new field name (API.md, IDs and Validation). */
function dotEdits(body: unknown): BodyEdit[] {
  const found: BodyEdit[] = [];
  for (const [path, value] of valuesOf(body)) {
    if (path[path.length - 1] !== 'user_id' || typeof value !== 'string') continue;
    for (const dots of ['.', '..']) found.push({ label: `${dotted(path)} = ${dots}`, refuse: true, path, edit: (v, p) => withRaw(v, p, JSON.stringify(dots)) });
  }
  for (const [at, value] of fieldNamesIn(body)) {
    for (const [name, raw, refuse] of [['.', value, true], ['..', value, true], ['..', 'null', at[0] === 'schema']] as const) {
      found.push({ label: `${dotted(at)} gains the field ${name} = ${raw}`, refuse, path: [...at, name], edit: (v, p) => withKey(v, p.slice(0, -1), name, raw) });
    }
  }
  return found;
}

/** `.`/`..` in a path parameter, percent-encoded as the path decoding reads them: no route names or makes such a thing. */
function dotParams(template: Template, target: Target): Mutation[] {
  return Object.keys(target.params).flatMap((param) =>
    ['%2E', '%2E%2E', '.%2e'].map((dots) => ({
      label: `:${param} ${dots}`, refuse: !template.creates?.includes(param) || param === 'user', params: { ...target.params, [param]: dots },
    })),
  );
}

/** A profile body's images past the JPEG scan limit or the body's pixel budget (API.md, Files). */
function imageMutations(template: Template, target: Target): Mutation[] {
  if (!template.multipart || !isPlainObject(target.body) || 'value' in target.body) return [];
  const parts = textParts(template, target.body);
  const sent = (label: string, refuse: boolean, files: Buffer[]) => ({ label, refuse, contentType: MULTIPART, body: multipart([...parts, ...files]) });
  return [
    sent('a JPEG of 65 scans', true, [filePart('avatar', 'image/jpeg', manyScanJpeg(65))]),
    sent('a JPEG of 64 scans', false, [filePart('avatar', 'image/jpeg', manyScanJpeg(64))]),
    sent('three images of 36 MP, 108 MP in all', true, ['avatar', 'photo', 'banner'].map((field) => filePart(field, 'image/png', sixThousandSquare))),
  ];
}
const sixThousandSquare = blackPng(6000, 6000);

/** The mutations of each rule a route has, each its own pool. */
function ruleMutations(template: Template, target: Target): Mutation[][] {
  const body = target.body;
  const edits = (made: BodyEdit[]) => (body === undefined ? [] : bodyMutations(template, body, made));
  return [
    readOnlyMutations(template, target),
    edits(body === undefined ? [] : misleadingEdits(body)),
    [...edits(body === undefined ? [] : dotEdits(body)), ...dotParams(template, target)],
    imageMutations(template, target),
  ].filter((pool) => pool.length > 0);
}

// ── Checks ─────────────────────────────────────────────────────────────────────────────────────────


/** JSON text with object keys sorted and OIDC secrets (shown once, masked on reads) left out. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (key, v) =>
    key === 'secret' ? undefined : v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
  );

/** What a GET of `path` answers, as JSON; a string saying what it answered instead of 200. */
async function readJson(path: string, headers: string[]): Promise<any> {
  const read = await rawRequest(server.port, [`GET ${path} HTTP/1.1`, 'host: localhost', 'connection: close', ...headers].join('\r\n') + '\r\n\r\n');
  return read.status === 200 ? JSON.parse(read.body.toString('utf8')) : `reading ${path} answered ${read.status}`;
}

async function readBackProblem(template: Template, params: Record<string, string>, headers: string[], response: RawResponse): Promise<string | undefined> {
  const answer = JSON.parse(response.body.toString('utf8'));
  const stored = await readJson(template.readBack!(params, answer), headers);
  if (typeof stored === 'string') return stored;
  return canonical(stored) === canonical(answer) ? undefined : `reading it back answers another body: ${canonical(stored).slice(0, 400)}`;
}

/** Whether an accepted write changed what the read-only keys it gave name (compared with a read before it). */
async function readOnlyProblem(readOnly: ReadOnly, target: Target, sent: Record<string, unknown>, before: any): Promise<string | undefined> {
  const after = await readJson(readOnly.read(target.params), target.headers);
  if (typeof before === 'string' || typeof after === 'string') return typeof before === 'string' ? before : after;
  const shown = readOnly.shown ?? ((read: any) => read);
  const changed = Object.keys(sent).filter((key) => {
    const [was, now] = [shown(before)[key], shown(after)[key]].map(canonical);
    return now !== was && (!readOnly.moves?.includes(key) || now === canonical(sent[key]));
  });
  return changed.length ? `read-only keys changed: ${changed.map((key) => `${key} ${canonical(shown(before)[key])} → ${canonical(shown(after)[key])}`).join(', ').slice(0, 400)}` : undefined;
}

function inChunks(body: Buffer, size: number): Buffer {
  const chunks: Buffer[] = [];
  for (let at = 0; at < body.length; at += size) {
    const chunk = body.subarray(at, at + size);
    chunks.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'));
  }
  return Buffer.concat([...chunks, Buffer.from('0\r\n\r\n')]);
}

function send(template: Template, target: Target, mutation: Mutation, origin: string | undefined): Promise<RawResponse> {
  const params = mutation.params ?? target.params;
  const path = template.path.replace(/:([a-z_]+)/g, (_m, name: string) => params[name]);
  const body = mutation.body ?? (target.body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(target.body)));
  const contentType = mutation.contentType === undefined ? (body.length ? 'application/json' : null) : mutation.contentType;
  const head = [
    `${template.method} ${path}${mutation.query ?? ''} HTTP/1.1`,
    'host: localhost',
    'connection: close',
    ...(mutation.headers ?? target.headers),
    ...(contentType === null ? [] : [`content-type: ${contentType}`]),
    mutation.chunked ? 'transfer-encoding: chunked' : `content-length: ${body.length}`,
    ...(mutation.extraHeaders ?? []),
    ...(origin === undefined ? [] : [`origin: ${origin}`]),
  ].join('\r\n');
  return rawRequest(server.port, `${head}\r\n\r\n`, mutation.chunked ? inChunks(body, 7) : body);
}

const started = Date.now();
let sent = 0;
for (const template of templates) {
  t.test(`${template.method} ${template.path}${template.variant ? ` (${template.variant})` : ''}`, async (t) => {
    const mutationsOf = (target: Target) => {
      const edits = target.body === undefined ? [] : bodyEdits(template, target.body);
      return [target.body === undefined ? [] : bodyMutations(template, target.body, [...edits, ...pairedEdits(edits, target.body)]), otherMutations(template, target), ...ruleMutations(template, target)];
    };
    let target = await template.setup();
    const [body, other, ...rules] = mutationsOf(target);
    const chosen = [...pick(body, Math.ceil(perRoute / 2)), ...pick(other, perRoute - Math.min(body.length, Math.ceil(perRoute / 2))), ...rules.flatMap((rule) => pick(rule, perRule))];
    // The same mutations of the current target (a fresh one once a mutation was accepted), by label.
    let current = new Map(chosen.map((m) => [m.label, m]));
    const problems: string[] = [];
    for (const { label } of chosen) {
      const mutation = current.get(label)!;
      const readBefore = mutation.readOnly && template.readOnly && (await readJson(template.readOnly.read(target.params), target.headers));
      const before = storeDigest(deps.store);
      // The same origin for the same label, whichever target it is sent to.
      const origin = originOf(streamOf(`origin of ${label}`));
      let response: RawResponse;
      try {
        response = await send(template, target, mutation, origin);
      } catch (error) {
        problems.push(`${mutation.label}: ${(error as Error).message}`);
        continue;
      } finally {
        sent++;
      }
      const said = `${mutation.label} → ${response.status} ${response.body.toString('utf8').slice(0, 300)}`;
      const cors = corsProblem(isBrowserRoute(template.method, template.path), origin, response);
      if (cors) problems.push(`${said}: ${cors}`);
      if (response.status >= 500) problems.push(said);
      else if (response.status >= 400) {
        const problem = errorBodyProblem(response);
        if (problem) problems.push(`${said}: ${problem}`);
        if (storeDigest(deps.store) !== before) problems.push(`${said}: the refusal changed the store`);
      } else {
        if (mutation.refuse) problems.push(`${said}: accepted`);
        const readProblem = template.readBack && (await readBackProblem(template, mutation.params ?? target.params, target.headers, response));
        if (readProblem) problems.push(`${said}: ${readProblem}`);
        const kept = readBefore && (await readOnlyProblem(template.readOnly!, target, mutation.readOnly!, readBefore));
        if (kept) problems.push(`${said}: ${kept}`);
        // It may have spent or changed what the next mutations target.
        target = await template.setup();
        current = new Map(mutationsOf(target).flat().map((m) => [m.label, m]));
      }
    }
    t.same(problems, [], `${chosen.length} mutations (seed ${seed})`);
  });
}

t.test('the server is still healthy', async (t) => {
  t.equal((await server.request('GET', '/health')).status, 200);
  t.comment(`${sent} requests in ${((Date.now() - started) / 1000).toFixed(1)} s`);
});
