import t from 'tap';
import { startServer, type TestServer } from '../../helpers/server.js';
import { userLock } from '../../../src/features/users/directory.js';
import { newId } from '../../../src/lib/ids.js';
import { signInByLink } from '../../helpers/sign-in.js';
import { platform } from '../groups/helpers.js';

const SEEDED = 3000;

/** Users straight through the directory, a thousand per turn: fast, and the same path every write takes. */
async function seed(server: TestServer, count: number, dataOf: (index: number) => Record<string, unknown> = () => ({})) {
  const { users, runtime } = server.deps;
  const appId = server.app.id;
  const ids: string[] = [];
  for (let start = 0; start < count; start += 1000) {
    const batch = Array.from({ length: Math.min(1000, count - start) }, () => newId('user'));
    await runtime.run(batch.map((id) => userLock(appId, id)), (turn) => {
      batch.forEach((id, i) => users.create(turn, { appId, id, data: dataOf(start + i), attributes: {} }));
    });
    ids.push(...batch);
  }
  return ids;
}

async function walk(server: TestServer, query: string, pageSize: number) {
  const seen: string[] = [];
  const totals = new Set<number>();
  let after: string | undefined;
  for (;;) {
    const cursor = after ? `&after=${encodeURIComponent(after)}` : '';
    const res = await server.request('GET', `/applications/${server.app.id}/users/data?page_size=${pageSize}${query}${cursor}`, {
      app: server.app,
    });
    if (res.status !== 200) throw new Error(res.text);
    totals.add(res.body.total_results);
    const ids = res.body.results.map((p: { svc_user: string }) => p.svc_user);
    seen.push(...ids);
    if (ids.length < pageSize) break;
    after = ids[ids.length - 1];
  }
  return { seen, totals: [...totals] };
}

t.test('paging over thousands of users in both orders: no gaps, no duplicates, exact totals', async (t) => {
  const server = await startServer(t);
  const ids = await seed(server, SEEDED);
  const ascending = [...ids].sort();
  t.same(ids, ascending, 'generated IDs sort in creation order');

  const asc = await walk(server, '', 137);
  t.equal(asc.seen.length, SEEDED);
  t.equal(new Set(asc.seen).size, SEEDED, 'no duplicates');
  t.same(asc.seen, ascending, 'every user, in ascending order');
  t.same(asc.totals, [SEEDED]);

  const desc = await walk(server, '&sort=desc', 251);
  t.same(desc.seen, [...ascending].reverse(), 'every user, in descending order');
  t.same(desc.totals, [SEEDED]);

  const first = await server.request('GET', `/applications/${server.app.id}/users/data`, { app: server.app });
  t.equal(first.body.results.length, 100, 'default page size');
  t.equal(first.body.total_results, SEEDED);
  t.same(first.body.results[0].data, { user_id: ascending[0] });

  const full = await server.request('GET', `/applications/${server.app.id}/users/data?page_size=1000&after=${ascending[2499]}`, { app: server.app });
  t.equal(full.body.results.length, 500, 'the cursor is exclusive');
  t.equal(full.body.results[0].svc_user, ascending[2500]);
});

t.test('each profile of a page is the one its own read answers, groups listed among them, in both orders', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ids = await seed(server, 40, (i) => ({ first_name: `Name ${i}`, bio: 'x'.repeat(10 + ((i * 37) % 900)) }));
  // Every third user joins groups: its page entry reads group renderings in between records.
  for (const name of ['Red', 'Green']) {
    const group = await api.post('/groups', { name });
    for (const userId of ids.filter((_, i) => i % 3 === 0)) t.equal((await api.post(`/groups/${group.body.id}/members`, { user_id: userId, roles: [] })).status, 200);
  }
  const own = await Promise.all(ids.map(async (userId) => (await api.get(`/users/${userId}/data`)).body));
  t.ok(own[0].groups.length === 2 && own[1].groups.length === 0);
  for (const sort of ['asc', 'desc']) {
    const page = await api.get(`/users/data?page_size=1000&sort=${sort}`);
    t.equal(page.status, 200);
    t.same(page.body.results, sort === 'asc' ? own : [...own].reverse(), `${sort}: every entry is its user's own profile`);
  }
});

t.test('filters: lookup (data and verified_data, case-insensitive), IDs, duplicates, fields', async (t) => {
  const server = await startServer(t);
  const appId = server.app.id;
  const ids = await seed(server, 40, (i) => ({
    email: i === 5 || i === 10 ? (i === 5 ? 'Twin@Example.com' : 'twin@example.COM') : `user${i}@example.com`,
    ...(i === 7 ? { phone_number: '+1 (555) 000-1234' } : {}),
    first_name: `F${i}`,
    last_name: `L${i}`,
  }));
  // A verified address differing from `data`: found through verified_data.
  await server.deps.runtime.run([userLock(appId, ids[20])], (turn) =>
    server.deps.users.change(turn, appId, ids[20], { type: 'user.signIn', method: 'magic_link', verified: { email: 'Proven@Example.com' }, at: turn.now }),
  );
  const list = async (query: string) => {
    const res = await server.request('GET', `/applications/${appId}/users/data?${query}`, { app: server.app });
    t.equal(res.status, 200, `${query}: ${res.text.slice(0, 200)}`);
    return { total: res.body.total_results as number, ids: res.body.results.map((p: { svc_user: string }) => p.svc_user) as string[], body: res.body };
  };

  const twin = await list('lookup_filter=TWIN@example.com');
  t.same([twin.total, twin.ids], [1, [ids[5]]], 'the oldest user per value');
  t.same((await list('lookup_filter=twin@example.com&include_duplicates=true')).ids, [ids[5], ids[10]]);
  t.same((await list('lookup_filter=twin@example.com&include_duplicates=true&sort=desc')).ids, [ids[10], ids[5]]);
  t.same((await list(`lookup_filter=${encodeURIComponent('+15550001234')}`)).ids, [ids[7]], 'phone numbers ignore punctuation');
  t.same((await list('lookup_filter=proven@example.com')).ids, [ids[20]], 'verified_data is searched');
  t.same((await list('lookup_filter=user20@example.com')).ids, [ids[20]], 'and so is data');
  t.same((await list('lookup_filter=nobody@example.com')).body, { total_results: 0, results: [] });

  // Each address is looked up once however often and in whatever case or spacing the filter writes it.
  const lookups: string[] = [];
  const findByAddress = server.deps.users.findByAddress.bind(server.deps.users);
  server.deps.users.findByAddress = (app, kind, value) => (lookups.push(value), findByAddress(app, kind, value));
  const repeated = ['TWIN@example.com', 'twin@example.com', ' Twin@Example.COM', '+1 555 000 1234', '+15550001234', '+1 (555) 000-1234'];
  const once = await list(`lookup_filter=${encodeURIComponent(Array.from({ length: 100 }, (_, i) => repeated[i % repeated.length]).join(','))}&include_duplicates=true`);
  t.same(once.ids, [ids[5], ids[7], ids[10]], 'the same users');
  t.equal(lookups.length, 2, 'two addresses, two lookups');
  server.deps.users.findByAddress = findByAddress;
  const several = await list('lookup_filter=user1@example.com,user3@example.com,twin@example.com,user39@example.com&page_size=2');
  t.equal(several.total, 4, 'total counts every match, not the page');
  t.same(several.ids, [ids[1], ids[3]]);
  const next = await list(`lookup_filter=user1@example.com,user3@example.com,twin@example.com,user39@example.com&page_size=2&after=${ids[3]}`);
  t.same(next.ids, [ids[5], ids[39]]);
  t.equal(next.total, 4);

  const byId = await list(`id_filter=${ids[9]},${ids[2]},unknown-user,${ids[30]}&page_size=2`);
  t.equal(byId.total, 3, 'unknown IDs do not count');
  t.same(byId.ids, [ids[2], ids[9]]);
  t.same((await list(`id_filter=${ids[9]},${ids[2]},${ids[30]}&sort=desc&after=${ids[30]}`)).ids, [ids[9], ids[2]]);

  const both = await list(`id_filter=${ids[5]},${ids[10]},${ids[11]}&lookup_filter=twin@example.com&include_duplicates=true`);
  t.same(both.ids, [ids[5], ids[10]], 'filters combine: users matching both');
  const younger = await list(`id_filter=${ids[10]},${ids[11]}&lookup_filter=twin@example.com`);
  t.same([younger.total, younger.ids], [1, [ids[10]]], 'a user matching both is found though an older user not listed holds the address too');
  t.same((await list(`id_filter=${ids[10]},${ids[5]}&lookup_filter=twin@example.com`)).ids, [ids[5]], 'the oldest of those listed per value');

  const projected = await list(`id_filter=${ids[1]}&fields=first_name,email`);
  t.same(projected.body.results[0].data, { user_id: ids[1], first_name: 'F1', email: 'user1@example.com' });
  const unfilteredProjection = await list('fields=last_name&page_size=1');
  t.same(unfilteredProjection.body.results[0].data, { user_id: ids[0], last_name: 'L0' });
  t.equal(unfilteredProjection.total, 40);
});

t.test('an address is one address however its accents are encoded: lookups and sign-ins find its user', async (t) => {
  const server = await startServer(t);
  const appId = server.app.id;
  // `é` as one code point (NFC) and as `e` with a combining accent (NFD): the same text to anyone reading it.
  const composed = 'Jos\u00e9@example.com';
  const decomposed = 'jose\u0301@EXAMPLE.com';
  t.equal((await server.request('PUT', `/applications/${appId}/users/jose/data`, { app: server.app, body: { data: { email: composed } } })).status, 200);
  const list = (value: string) =>
    server.request('GET', `/applications/${appId}/users/data?lookup_filter=${encodeURIComponent(value)}`, { app: server.app });
  t.same((await list(decomposed)).body.results.map((p: { svc_user: string }) => p.svc_user), ['jose'], 'found by the decomposed form');
  t.same((await list(composed.toUpperCase())).body.results.map((p: { svc_user: string }) => p.svc_user), ['jose'], 'and by the composed one');
  const signedIn = await signInByLink(server, decomposed);
  t.equal(signedIn.app_user_id, 'jose', 'a sign-in by the decomposed form is the same user, not a new one');
  t.equal(server.deps.users.count(appId), 1);
});

t.test('malformed or out-of-range parameters are 400 E_VALIDATION, never clamped', async (t) => {
  const server = await startServer(t);
  await seed(server, 3);
  for (const query of [
    'page_size=0',
    'page_size=1001',
    'page_size=-1',
    'page_size=1.5',
    'page_size=ten',
    'page_size=',
    'sort=up',
    'after=not%20an%20id',
    'include_duplicates=yes',
    'lookup_filter=',
    'lookup_filter=a@example.com,,b@example.com',
    'id_filter=a%20b',
    'fields=a,,b',
    'page_size=10&page_size=20',
    'pageSize=10',
    '__proto__=1',
  ]) {
    const res = await server.request('GET', `/applications/${server.app.id}/users/data?${query}`, { app: server.app });
    t.equal(res.status, 400, query);
    t.equal(res.body.code, 'E_VALIDATION', query);
    t.ok(Object.keys(res.body.field_errors ?? {}).length > 0, `${query} names the parameter`);
  }
  const edge = await server.request('GET', `/applications/${server.app.id}/users/data?page_size=1000`, { app: server.app });
  t.equal(edge.status, 200);
  const one = await server.request('GET', `/applications/${server.app.id}/users/data?page_size=1`, { app: server.app });
  t.equal(one.body.results.length, 1);
  t.equal(one.body.total_results, 3);
  for (const list of [`/applications/${server.app.id}/users/data`, `/applications/${server.app.id}/oidc-clients`, `/applications/${server.app.id}/groups`]) {
    for (const size of ['01', '00000001', '010']) {
      const zeros = await server.request('GET', `${list}?page_size=${size}`, { app: server.app });
      t.equal(zeros.status, 400, `${list} page_size=${size}: leading zeros are refused, as in every other number the API reads`);
      t.same(zeros.body.field_errors, { page_size: [`must be a whole number from 1 to ${list.endsWith('groups') ? 100 : 1000}, without leading zeros`] });
    }
  }
  const huge = await server.request('GET', `/applications/${server.app.id}/users/data?page_size=${'9'.repeat(400)}`, { app: server.app });
  t.equal(huge.status, 400, 'a number past any page is out of range');
});

t.test('a page past 32 MiB of profiles is refused before it is built; a smaller page of the same users answers', async (t) => {
  const server = await startServer(t);
  // Nine profiles near the 4 MiB cap (64 KiB strings): 35 MB, past LIST_BYTES_LIMIT; eight fit.
  const big = (index: number) => Object.fromEntries(Array.from({ length: 60 }, (_, field) => [`f${field}`, String(index).repeat(65_000)]));
  const ids = await seed(server, 9, big);
  const list = (query: string) => server.request('GET', `/applications/${server.app.id}/users/data?${query}`, { app: server.app });
  for (const query of ['page_size=1000', `page_size=1000&id_filter=${ids.join(',')}`]) {
    const refused = await list(query);
    t.equal(refused.status, 400, query);
    t.equal(refused.body.code, 'E_VALIDATION');
    t.match(refused.body.field_errors.page_size, [/more than 32 MiB of profiles: ask for fewer per page/]);
  }
  const fewer = await list('page_size=8');
  t.equal(fewer.status, 200);
  t.equal(fewer.body.results.length, 8);
  t.equal(fewer.body.total_results, 9);
  const projected = await list('page_size=1000&fields=f0');
  t.equal(projected.status, 200, 'a projection is measured by what it answers');
  t.equal(projected.body.results.length, 9);
});

t.test('a lookup_filter value that is no email address or phone number is 400 on lookup_filter; one that is, matching no one, an empty page', async (t) => {
  const server = await startServer(t);
  await seed(server, 2, (i) => ({ email: `user${i}@example.com` }));
  const list = (value: string) =>
    server.request('GET', `/applications/${server.app.id}/users/data?lookup_filter=${encodeURIComponent(value)}`, { app: server.app });
  for (const value of ['nobody', '12', 'a@b@example.com', 'user0@example.com,+1 555 abc', `${'a'.repeat(250)}@x.io`]) {
    const res = await list(value);
    t.equal(res.status, 400, JSON.stringify(value));
    t.same(Object.keys(res.body.field_errors ?? {}), ['lookup_filter'], `${JSON.stringify(value)} names lookup_filter`);
  }
  t.same((await list('nobody@example.com,+1 555 000 9999')).body, { total_results: 0, results: [] }, 'well-formed addresses of no one: an empty page');
  // An address stored before a character rule holds such characters: a lookup is held to the shape alone.
  t.same((await list('user0@example.com,a\u0001b@example.com')).body.total_results, 1, 'a control character in a well-formed address is looked up');
  t.equal((await list('USER1@example.com')).body.total_results, 1);
});
