import t from 'tap';
import sharp from 'sharp';
import { corsProblem, errorBodyProblem, isBrowserRoute, originOf, REGISTERED_ORIGIN, startFuzzServer, fuzzRun } from '../helpers/fuzz.js';
import { tokenFor } from '../helpers/tokens.js';
import { rawRequest, type RawResponse } from '../helpers/raw-http.js';
import { storeDigest } from '../helpers/store-digest.js';
import { labelledRandom } from '../helpers/seeded-random.js';

// The counterpart of fuzz-write-routes.test.ts for every GET (and HEAD) route: each starts from a
// valid request, whose query parameters, path IDs and headers are then mutated (repeated, empty,
// huge, negative, fractional, non-numeric, unknown; cursors of another kind or app, of a deleted
// item, malformed, over-long; IDs too long, empty, oddly percent-encoded, of another app). Every
// answer: no 5xx, no hang, no dropped connection; a refusal has the ADDENDUM §7 body with a code of
// §7 at its status; a read changes nothing stored; a 200 list holds at most its page size, its items
// after the cursor in the documented order. Then every list is paged to its end: no duplicates, no
// gaps. Besides, a few values of round 19's rules per route: lookup_filter values no item of the list
// could match (refused) or that a name may be, stored before a rule too (taken), `.`/`..` IDs as the path decoding reads them; and
// every request carries an Origin header drawn from the seed (none, the one an OIDC client registers,
// altered, a random one), answered only where CORS allows it, and each path gets CORS preflights (204). FUZZ_SEED replays another run;
// FUZZ_PER_ROUTE sends more mutations per route, FUZZ_PER_RULE more of the rules'.
const { seed, perRoute, perRule, random, pick } = fuzzRun(t, { perRoute: 24, perRule: 3 });

const { server, deps, app, names, appHeaders, adminHeaders, bearer, ok, platform } = await startFuzzServer(t, {
  fields: {
    nickname: { type: 'string', user_readable: true, user_writable: true },
    avatar: { type: 'image', user_readable: true, user_writable: true },
    secret_note: { type: 'string' },
  },
} as never);

// ── A fixed data set ──────────────────────────────────────────────────────────────────────────────

const otherApp = await deps.apps.create('other');
const otherCredential = await deps.apps.createCredential(otherApp.id);
const otherAuth = { id: otherApp.id, key: otherCredential.key, secret: otherCredential.secret };
const otherGroup = await ok(server.request('POST', `/applications/${otherApp.id}/groups`, { app: otherAuth, body: { name: 'Theirs' } }), 'other group');
await ok(server.request('PUT', `/applications/${otherApp.id}/users/their-user/data`, { app: otherAuth, body: { data: {} } }), 'other user');
const otherClient = await ok(server.request('POST', `/applications/${otherApp.id}/oidc-clients`, { app: otherAuth, body: { name: 'Theirs' } }), 'other client');

// Seven users, two sharing an address (include_duplicates), one with an image (previews), one deleted.
const people: Array<Awaited<ReturnType<typeof tokenFor>>> = [];
for (let i = 0; i < 7; i++) people.push(await tokenFor(server, { email: `p${i}@example.com` }));
const owner = people[0];
await platform('PUT', `/users/${people[6].userId}/data`, { data: { email: 'p5@example.com', nickname: 'twin' } });
const gone = await tokenFor(server, { email: 'gone@example.com' });
await platform('DELETE', `/users/${gone.userId}/data`);
const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#c33' } }).png().toBuffer();
const upload = new FormData();
upload.append('value', new Blob([png], { type: 'image/png' }), 'a.png');
await ok(server.request('PUT', `/me/applications/${app.id}/data/fields/avatar`, { token: owner.token, rawBody: upload }), 'avatar');

// Groups: one with five members and three invites, six more groups, one deleted.
const made = await ok(server.request('POST', '/me/groups', { token: owner.token, body: { name: 'Crew' } }), 'group');
const group = made.group.id as string;
const ownerMember = made.member.id as string;
for (const p of people.slice(1, 5)) await platform('POST', `/groups/${group}/members`, { user_id: p.userId, roles: ['editor'] });
const invites: string[] = [];
for (const p of people.slice(5, 7)) invites.push((await platform('POST', `/groups/${group}/invites`, { user_id: p.userId, roles: ['viewer'] })).invitation.id);
invites.push((await platform('POST', `/groups/${group}/invites`, { email: 'new@example.com', roles: ['viewer'] })).invitation.id);
for (let i = 0; i < 6; i++) await platform('POST', '/groups', { name: `Team ${i}` });
const goneGroup = (await platform('POST', '/groups', { name: 'Gone' })).id as string;
await platform('DELETE', `/groups/${goneGroup}`);
const memberList = await platform('GET', `/groups/${group}/members`);
const aMember = memberList.results.find((m: any) => m.user_id === people[1].userId).id as string;
const goneMember = (await platform('POST', `/groups/${group}/members`, { user_id: (await tokenFor(server, { email: 'left@example.com' })).userId, roles: [] })).id as string;
await platform('DELETE', `/groups/${group}/members/${goneMember}`);
// OIDC clients: five, one deleted.
const clients: string[] = [];
for (let i = 0; i < 5; i++) clients.push((await platform('POST', '/oidc-clients', { name: `Client ${i}`, config: i === 4 ? { allowed_origins: [REGISTERED_ORIGIN] } : {} })).id);
const goneClient = (await platform('POST', '/oidc-clients', { name: 'Gone' })).id as string;
await platform('DELETE', `/oidc-clients/${goneClient}`);

// IDs of every kind, for cursors and path parameters of the wrong kind.
const idsOfKind: Record<string, string> = {
  user: people[1].userId, group, member: aMember, invite: invites[0], client: clients[0], app: app.id,
  otherGroup: otherGroup.id, otherClient: otherClient.id, otherUser: 'their-user', otherApp: otherApp.id,
  goneUser: gone.userId, goneGroup, goneMember, goneClient,
};

// ── Routes ────────────────────────────────────────────────────────────────────────────────────────

interface Template {
  path: string;
  params: Record<string, string>;
  headers: string[];
  /** The query of the valid request. */
  query?: Record<string, string>;
  /** Query parameters the route takes, with values that are valid. */
  takes?: Record<string, string[]>;
  /** A list: the kind of its IDs (cursors), its maximal page size, whether it takes `sort`, and filters to page through too. */
  list?: { cursor: string; max: number; sort?: boolean; id: (item: any) => string; filters?: Array<Record<string, string>> };
  /** Routes that ignore their query (probes, key caches). */
  ignoresQuery?: true;
  /** The route answers bytes that are not JSON on 200. */
  binary?: true;
  /** Reads store what they made (previews, ADDENDUM §3: "made once, cached"). */
  caches?: true;
}

const pageParams = (max: number, cursors: string[], sort = false): Record<string, string[]> => ({
  page_size: ['1', '2', String(max)],
  after: cursors,
  ...(sort ? { sort: ['asc', 'desc'] } : {}),
});
const userId = (p: any) => p[names.userField];
const byId = (item: any) => item.id;
const appP = { app: app.id };
const templates: Template[] = [
  // Users, platform.
  {
    path: '/applications/:app/users/data', params: appP, headers: appHeaders,
    takes: { ...pageParams(1000, [people[2].userId, gone.userId], true), fields: ['nickname', 'email,nickname'], lookup_filter: ['p5@example.com', 'P1@EXAMPLE.com,p2@example.com'], id_filter: [people[3].userId, `${people[1].userId},${gone.userId}`], include_duplicates: ['true', 'false'] },
    list: {
      cursor: 'user', max: 1000, sort: true, id: userId,
      filters: [
        { lookup_filter: 'p5@example.com,P1@example.com,p3@example.com', include_duplicates: 'true' },
        { lookup_filter: 'p5@example.com,p1@example.com' },
        { id_filter: [...people.map((p) => p.userId), gone.userId].join(',') },
        { id_filter: people.slice(0, 6).map((p) => p.userId).join(','), lookup_filter: 'p5@example.com,p2@example.com,p4@example.com', include_duplicates: 'true', fields: 'nickname' },
      ],
    },
  },
  { path: '/applications/:app/users/:user/data', params: { ...appP, user: owner.userId }, headers: appHeaders, takes: { fields: ['nickname', 'email,avatar'] } },
  { path: '/applications/:app/users/__sample__/data', params: appP, headers: appHeaders, takes: { fields: ['nickname'] } },
  { path: '/applications/:app/users/:user/data/fields/:field', params: { ...appP, user: owner.userId, field: 'nickname' }, headers: appHeaders, takes: { fail_on_error: ['true', 'false'] } },
  { path: '/applications/:app/users/:user/data/fields/:field', params: { ...appP, user: owner.userId, field: 'avatar' }, headers: appHeaders, takes: { preview: ['small', 'medium', 'large'], fail_on_error: ['true'] }, query: { preview: 'small' }, binary: true, caches: true },
  // Users, /me.
  { path: '/me/applications/:app/data', params: appP, headers: bearer(owner.token) },
  { path: '/me/applications/:app/data/fields/:field', params: { ...appP, field: 'nickname' }, headers: bearer(owner.token) },
  { path: '/me/applications/:app/data/fields/:field', params: { ...appP, field: 'avatar' }, headers: bearer(owner.token), takes: { preview: ['small', 'medium', 'large'] }, query: { preview: 'medium' }, binary: true, caches: true },
  // Groups, /me.
  { path: '/me/groups', params: {}, headers: bearer(owner.token), takes: pageParams(100, [group, goneGroup]), list: { cursor: 'group', max: 100, id: (w: any) => w.group.id } },
  { path: '/me/groups/:group', params: { group }, headers: bearer(owner.token) },
  { path: '/me/groups/:group/members', params: { group }, headers: bearer(owner.token), takes: { ...pageParams(100, [aMember, goneMember]), lookup_filter: [people[2].userId, 'p3@example.com'] }, list: { cursor: 'member', max: 100, id: byId } },
  { path: '/me/groups/:group/members/:member', params: { group, member: aMember }, headers: bearer(owner.token) },
  { path: '/me/groups/:group/invites', params: { group }, headers: bearer(owner.token), takes: { ...pageParams(100, [invites[0]]), ensured_user_id: [people[5].userId] }, list: { cursor: 'invite', max: 100, id: byId } },
  { path: '/me/groups/:group/invites/:invite', params: { group, invite: invites[1] }, headers: bearer(owner.token) },
  // Groups, platform.
  { path: '/applications/:app/groups', params: appP, headers: appHeaders, takes: { ...pageParams(100, [group, goneGroup]), lookup_filter: ['team 1', `${group},Team 2`] }, list: { cursor: 'group', max: 100, id: byId, filters: [{ lookup_filter: `Team 1,team 3,${group},TEAM 5,Gone` }] } },
  { path: '/applications/:app/groups/:group', params: { ...appP, group }, headers: appHeaders },
  { path: '/applications/:app/groups/:group/members', params: { ...appP, group }, headers: appHeaders, takes: { ...pageParams(100, [aMember, goneMember]), lookup_filter: ['p2@example.com', people[4].userId] }, list: { cursor: 'member', max: 100, id: byId, filters: [{ lookup_filter: `p2@example.com,${people[4].userId},p5@example.com,${people[1].userId}` }] } },
  { path: '/applications/:app/groups/:group/members/:member', params: { ...appP, group, member: aMember }, headers: appHeaders },
  { path: '/applications/:app/groups/:group/invites', params: { ...appP, group }, headers: appHeaders, takes: { ...pageParams(100, [invites[1]]), ensured_user_id: [people[6].userId] }, list: { cursor: 'invite', max: 100, id: byId, filters: [{ ensured_user_id: people[5].userId }] } },
  { path: '/applications/:app/groups/:group/invites/:invite', params: { ...appP, group, invite: invites[2] }, headers: appHeaders },
  // OIDC clients.
  { path: '/applications/:app/oidc-clients', params: appP, headers: appHeaders, takes: pageParams(1000, [clients[1], goneClient], true), list: { cursor: 'client', max: 1000, sort: true, id: byId } },
  { path: '/applications/:app/oidc-clients/:client', params: { ...appP, client: clients[2] }, headers: appHeaders },
  // Admin.
  { path: '/admin/applications', params: {}, headers: adminHeaders },
  { path: '/admin/applications/:app', params: appP, headers: adminHeaders },
  { path: '/admin/applications/:app/credentials', params: appP, headers: adminHeaders },
  // Hub and system.
  { path: '/hub/app-config', params: {}, headers: [`${names.appKeyHeader}: ${app.key}`] },
  { path: '/hub/auth/keys', params: {}, headers: [], ignoresQuery: true },
  { path: '/hub/auth/.well-known/oauth-authorization-server', params: {}, headers: [], ignoresQuery: true },
  { path: '/health', params: {}, headers: [], ignoresQuery: true },
  { path: '/metrics', params: {}, headers: [], ignoresQuery: true, binary: true },
];

// ── Mutations ─────────────────────────────────────────────────────────────────────────────────────

interface Mutation {
  label: string;
  /** Every reading of the docs refuses it (else it may pass, and is held to the other checks). */
  refuse: boolean;
  method?: string;
  params?: Record<string, string>;
  query?: Array<[string, string]>;
  /** Sent as written after `?`, unencoded. */
  rawQuery?: string;
  headers?: string[];
  extraHeaders?: string[];
  /** The Origin header, where it is not drawn from the label. */
  origin?: string;
}

const enc = encodeURIComponent;
const entries = (query: Record<string, string> | undefined) => Object.entries(query ?? {});

function mutationsOf(template: Template): Mutation[] {
  const found: Mutation[] = [];
  const base = entries(template.query);
  const take = (label: string, refuse: boolean, query: Array<[string, string]>) => found.push({ label, refuse, query });
  const takes = template.takes ?? {};
  for (const [name, values] of Object.entries(takes)) {
    for (const value of values) take(`${name}=${value}`, false, [...base.filter(([n]) => n !== name), [name, value]]);
    take(`${name} repeated`, true, [...base, [name, values[0]], [name, values[0]]]);
    take(`${name} repeated, values differing`, true, [...base.filter(([n]) => n !== name), [name, values[0]], [name, values.at(-1)!]]);
    const bad: Array<[string, string, boolean]> = [
      ['empty', '', name !== 'fields' && name !== 'after'],
      ['huge', 'x'.repeat(5000), name !== 'fields'],
      ['a NUL', '\u0000', !['fields', 'lookup_filter'].includes(name)],
      ['a lone surrogate, percent-encoded', '%ED%A0%80', true],
      ['malformed percent-encoding', '%E0%A4%A', true],
    ];
    if (name === 'page_size' || name === 'fail_on_error' || name === 'include_duplicates' || name === 'preview' || name === 'sort') {
      bad.push(['negative', '-1', true], ['zero', '0', name === 'page_size'], ['fractional', '1.5', true], ['non-numeric', 'ten', true],
        ['with a leading zero', '02', true], ['past the maximum', String((template.list?.max ?? 1) + 1), name === 'page_size'],
        ['2^53 + 1', '9007199254740993', true], ['exponent', '1e2', true], ['hex', '0x10', true], ['padded', ' 5', true],
        ['in upper case', values[0].toUpperCase(), values[0].toUpperCase() !== values[0]]);
    }
    if (name === 'after' || name === 'id_filter' || name === 'ensured_user_id') {
      for (const [kind, id] of Object.entries(idsOfKind)) {
        // Apps name users with IDs of their own (ADDENDUM §1): any ID is a user cursor.
        const refuse = name === 'after' && !kind.startsWith('gone') && !kind.startsWith('other') && kind !== template.list?.cursor && template.list?.cursor !== 'user';
        bad.push([`of kind ${kind}`, id, refuse]);
      }
      bad.push(['129 characters', 'u'.repeat(129), name === 'after'], ['a cursor in upper case', (takes[name][0] ?? '').toUpperCase(), false]);
      bad.push(['a comma list', `${takes[name][0]},${takes[name][0]}`, name !== 'id_filter']);
    }
    if (name === 'lookup_filter' || name === 'id_filter' || name === 'fields') {
      bad.push(['1001 values', Array.from({ length: 1001 }, (_, i) => `v${i}@example.com`).join(','), name !== 'fields'],
        ['only commas', ',,,', true], ['__proto__', '__proto__', false], ['a phone number', '%2B15551234567', false]);
    }
    for (const [what, value, refuse] of bad) {
      const raw = value.includes('%') ? value : enc(value);
      found.push({ label: `${name} ${what}`, refuse, rawQuery: [...base.filter(([n]) => n !== name).map(([n, v]) => `${n}=${enc(v)}`), `${name}=${raw}`].join('&') });
    }
  }
  if (template.list) {
    take('page_size=1 after the last item', false, [...base, ['page_size', '1']]);
  }
  for (const rawQuery of ['fuzz=1', 'a=%', '%00=%00', `${'q'.repeat(3000)}=1`, 'page_size', '=', '&&&', 'PAGE_SIZE=1', 'sort=desc', 'order=desc', 'desc=true', 'after=']) {
    const known = rawQuery.split('=')[0] in takes;
    const valid = known && (rawQuery === 'sort=desc' || rawQuery === 'after=');
    found.push({ label: `query ${rawQuery.slice(0, 30)}`, refuse: !template.ignoresQuery && !valid && rawQuery !== '&&&', rawQuery: [...base.map(([n, v]) => `${n}=${enc(v)}`), rawQuery].join('&') });
  }
  for (const accept of ['application/xml', '*/*', 'text/html', 'image/*', 'application/json;q=0', 'x'.repeat(4000)]) {
    found.push({ label: `accept ${accept.slice(0, 30)}`, refuse: false, extraHeaders: [`accept: ${accept}`] });
  }
  found.push({ label: 'HEAD', refuse: false, method: 'HEAD' });
  found.push({ label: 'a body on a GET', refuse: false, extraHeaders: ['content-type: application/json', 'content-length: 2'] });
  found.push({ label: 'if-none-match *', refuse: false, extraHeaders: ['if-none-match: *'] });
  found.push({ label: 'range bytes=0-1', refuse: false, extraHeaders: ['range: bytes=0-1'] });
  found.push({ label: 'an odd header repeated', refuse: false, extraHeaders: ['x-fuzz: 1', 'x-fuzz: 2'] });
  if (template.headers.length) {
    found.push({ label: 'no credentials', refuse: true, headers: [] });
    found.push({ label: 'the credentials given twice', refuse: true, extraHeaders: template.headers });
    if (template.params.app && template.headers === appHeaders) {
      found.push({ label: 'the credentials of the other app', refuse: true, headers: [`${names.appKeyHeader}: ${otherCredential.key}`, `${names.appSecretHeader}: ${otherCredential.secret}`] });
    }
  }
  for (const param of Object.keys(template.params)) {
    const value = template.params[param];
    const candidates: Array<[string, string]> = [
      ['3000 characters', 'z'.repeat(3000)], ['129 characters', 'y'.repeat(129)], ['empty', ''],
      ['malformed percent-encoding', '%E0%A4%A'], ['a percent-encoded slash', 'a%2Fb'], ['a percent-encoded NUL', 'a%00b'],
      ['__proto__', '__proto__'], ['constructor', 'constructor'], ['a lone surrogate, percent-encoded', '%ED%A0%80'],
      ['.', '.'], ['..', '..'], ['%2E%2E', '%2E%2E'], ['in upper case', value.toUpperCase()], ['with a space after it', `${value}%20`],
      ['percent-encoded whole', [...value].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('')],
    ];
    // Percent-encoding the ID whole names the same resource, and another ID of its kind (of another app, for
    // the admin) may name one; anything else names another or none.
    const readable = new Set(['percent-encoded whole', `of kind ${param}`, ...(template.path.startsWith('/admin') ? ['of kind otherApp'] : [])]);
    for (const [kind, id] of Object.entries(idsOfKind)) if (id !== value) candidates.push([`of kind ${kind}`, id]);
    for (const [what, v] of candidates) {
      found.push({ label: `:${param} ${what}`, refuse: !readable.has(what), params: { ...template.params, [param]: v } });
    }
  }
  return found;
}

/**
 * Misleading characters (a bidirectional control, a line separator) inside `text`: a lookup takes them in a
 * name (one stored before the rule may hold them), not in an address, where U+2028 is whitespace.
 */
const misleading = (text: string) => `${text.slice(0, 2)}\u202e${text.slice(2, 4)}\u2028${text.slice(4)}`;

/** Round 19's rules: lookup_filter values by what the list's items could be (API.md, Lists), dot segments as IDs. */
function ruleMutations(template: Template): Mutation[] {
  const found: Mutation[] = [];
  const base = entries(template.query).map(([n, v]) => `${n}=${enc(v)}`);
  const kind = template.list?.cursor;
  if (template.takes?.lookup_filter) {
    const values: Array<[string, string, boolean]> =
      kind === 'user'
        ? [['no address', 'nobody', true], ['digits too few for a phone number', '12', true], ['two @', 'a@b@c', true], ['an address holding a line separator', misleading('p1@example.com'), true],
            ['an empty entry', 'p1@example.com,,p2@example.com', true], ['an address with a space', 'a b@example.com', true], ['an address in upper case', 'P3@EXAMPLE.COM', false]]
        : kind === 'group'
          ? [['201 characters', 'g'.repeat(201), true], ['a name holding misleading characters', misleading('Team 1'), false], ['an empty entry (a name may hold commas)', 'Team 1,,Team 2', false],
              ['a name of 200 characters', 'g'.repeat(200), false], ['..', '..', false], ['a name in upper case', 'TEAM 4', false]]
          : [['a space', 'a b', true], ['an empty entry', `${people[2].userId},,p3@example.com`, true], ['129 characters', 'u'.repeat(129), true],
              ['an address holding a line separator', misleading('p3@example.com'), true], ['a user ID', people[3].userId, false], ['.', '.', false]];
    for (const [what, value, refuse] of values) found.push({ label: `lookup_filter ${what}`, refuse, rawQuery: [...base, `lookup_filter=${enc(value)}`].join('&') });
  }
  for (const param of Object.keys(template.params)) {
    for (const dots of ['%2E', '.%2e', '%2e%2E']) found.push({ label: `:${param} ${dots}`, refuse: true, params: { ...template.params, [param]: dots } });
  }
  return found;
}

/**
 * CORS preflights of the route's path (API.md, CORS): 204 on any path, allowing only the registered origin
 * on a browser route; and a method no route takes there (405 with Allow), which such an origin can read too.
 */
const preflights = (): Mutation[] => [
  ...[[REGISTERED_ORIGIN, 'GET'], [REGISTERED_ORIGIN, 'DELETE'], ['https://elsewhere.example', 'GET']].map(([origin, method]) => ({
    label: `a preflight from ${origin} for ${method}`, refuse: false, method: 'OPTIONS', origin, extraHeaders: [`access-control-request-method: ${method}`],
  })),
  { label: 'TRACE from the registered origin', refuse: true, method: 'TRACE', origin: REGISTERED_ORIGIN },
];

// ── Checks ────────────────────────────────────────────────────────────────────────────────────────

function errorProblem(response: RawResponse, head: boolean): string | undefined {
  if (head) return response.body.length === 0 ? undefined : 'a HEAD answer with a body';
  return errorBodyProblem(response);
}

function queryOf(mutation: Mutation, template: Template): URLSearchParams {
  if (mutation.rawQuery !== undefined) return new URLSearchParams(mutation.rawQuery);
  return new URLSearchParams(mutation.query ?? entries(template.query));
}

/** A 200 list: at most its page size, after its cursor, in its order. */
function listProblem(template: Template, mutation: Mutation, answer: any): string | undefined {
  const list = template.list!;
  if (!Array.isArray(answer.results) || !Number.isInteger(answer.total_results)) return 'not a list envelope';
  const query = queryOf(mutation, template);
  const size = Number(query.get('page_size') ?? (list.max === 1000 ? 100 : 20));
  if (answer.results.length > size) return `${answer.results.length} results on a page of ${size}`;
  if (answer.total_results < answer.results.length) return 'total_results below the page';
  const ids: string[] = answer.results.map(list.id);
  const desc = query.get('sort') === 'desc';
  const after = query.get('after');
  for (let i = 0; i < ids.length; i++) {
    if (after && (desc ? ids[i] >= after : ids[i] <= after)) return `${ids[i]} is not after the cursor ${after}`;
    if (i > 0 && (desc ? ids[i] >= ids[i - 1] : ids[i] <= ids[i - 1])) return `${ids[i]} is out of order`;
  }
  return undefined;
}

function send(template: Template, mutation: Mutation, origin?: string): Promise<RawResponse> {
  const params = mutation.params ?? template.params;
  const path = template.path.replace(/:([a-z_]+)/g, (_m, name: string) => params[name]);
  const query = mutation.rawQuery ?? new URLSearchParams(mutation.query ?? entries(template.query)).toString();
  const head = [
    `${mutation.method ?? 'GET'} ${path}${query ? `?${query}` : ''} HTTP/1.1`,
    'host: localhost',
    'connection: close',
    ...(mutation.headers ?? template.headers),
    ...(mutation.extraHeaders ?? []),
    ...(origin === undefined ? [] : [`origin: ${origin}`]),
  ].join('\r\n');
  const body = mutation.extraHeaders?.includes('content-length: 2') ? Buffer.from('{}') : Buffer.alloc(0);
  return rawRequest(server.port, `${head}\r\n\r\n`, body);
}

const started = Date.now();
let sent = 0;
for (const template of templates) {
  t.test(`GET ${template.path}${template.query ? `?${new URLSearchParams(template.query)}` : ''}${template.params.field ? ` (${template.params.field})` : ''}`, async (t) => {
    const all = mutationsOf(template);
    // The valid values of every parameter, then a seeded pick of the rest, and of the rules'.
    const valid = all.filter((m) => !m.refuse && m.query);
    const chosen = [...valid, ...pick(all.filter((m) => !valid.includes(m)), perRoute), ...pick(ruleMutations(template), perRule), ...preflights()];
    const problems: string[] = [];
    const before = storeDigest(deps.store);
    for (const mutation of chosen) {
      let response: RawResponse;
      const origin = mutation.origin ?? originOf(labelledRandom(seed, `origin of ${mutation.label}`));
      try {
        response = await send(template, mutation, origin);
      } catch (error) {
        problems.push(`${mutation.label}: ${(error as Error).message}`);
        continue;
      } finally {
        sent++;
      }
      const head = mutation.method === 'HEAD';
      if (head) {
        const got = await send(template, { ...mutation, method: 'GET' });
        const [a, b] = [response, got].map((r) => `${r.status} ${r.headers['content-type']} ${r.headers['content-length']}`);
        if (template.path !== '/metrics' && a !== b) problems.push(`HEAD answers ${a}, GET ${b}`);
      }
      const said = `${mutation.label} → ${response.status} ${response.body.toString('utf8').slice(0, 300)}`;
      const cors = corsProblem(isBrowserRoute('GET', template.path), origin, response);
      if (cors) problems.push(`${said}: ${cors}`);
      if (mutation.method === 'TRACE' && (response.status !== 405 || !response.headers.allow)) problems.push(`${said}: not 405 with Allow`);
      if (mutation.method === 'OPTIONS') {
        if (response.status !== 204 || response.body.length) problems.push(`${said}: a preflight not answered 204 without a body`);
      } else if (response.status >= 500) problems.push(said);
      else if (response.status >= 400) {
        const problem = errorProblem(response, head);
        if (problem) problems.push(`${said}: ${problem}`);
      } else {
        if (mutation.refuse) problems.push(`${said}: accepted`);
        if (template.list && !head) {
          const problem = listProblem(template, mutation, JSON.parse(response.body.toString('utf8')));
          if (problem) problems.push(`${said}: ${problem}`);
        }
      }
    }
    if (!template.caches && storeDigest(deps.store) !== before) problems.push('the reads changed the store');
    t.same(problems, [], `${chosen.length} requests (seed ${seed})`);
  });
}

// Every list paged to its end (unfiltered and filtered), a page size drawn from the seed: each item once, in
// order, as many as total_results.
for (const template of templates.filter((x) => x.list)) {
  const list = template.list!;
  for (const sort of list.sort ? ['asc', 'desc'] : ['asc']) {
    for (const filter of [{}, ...(list.filters ?? [])]) {
      const base: Array<[string, string]> = [...Object.entries(filter), ...(sort === 'desc' ? [['sort', 'desc'] as [string, string]] : [])];
      t.test(`paging GET ${template.path}${base.length ? `?${new URLSearchParams(base)}` : ''} to its end`, async (t) => {
        const size = 1 + Math.floor(random() * 3);
        const read = async (query: Array<[string, string]>) => {
          const response = await send(template, { label: 'page', refuse: false, query: [...base, ...query] });
          if (response.status !== 200) throw new Error(`${new URLSearchParams(query)} answered ${response.status}: ${response.body.toString('utf8').slice(0, 300)}`);
          return JSON.parse(response.body.toString('utf8'));
        };
        const whole = await read([['page_size', String(list.max)]]);
        const seen: string[] = [];
        const problems: string[] = [];
        let after: string | undefined;
        for (let page = 0; page < 100; page++) {
          const body = await read([['page_size', String(size)], ...(after ? [['after', after] as [string, string]] : [])]);
          if (body.total_results !== whole.total_results) problems.push(`page ${page}: total_results ${body.total_results}, not ${whole.total_results}`);
          const ids: string[] = body.results.map(list.id);
          if (ids.length > size) problems.push(`page ${page} holds ${ids.length}`);
          seen.push(...ids);
          if (ids.length < size) break;
          after = ids.at(-1);
        }
        t.same(problems, []);
        t.same(seen, whole.results.map(list.id), `size ${size}: the pages are the whole list, in order, each item once`);
        t.equal(seen.length, whole.total_results, 'as many as total_results');
      });
    }
  }
}

t.test('the server is still healthy', async (t) => {
  t.equal((await server.request('GET', '/health')).status, 200);
  t.comment(`${sent} requests in ${((Date.now() - started) / 1000).toFixed(1)} s`);
});
