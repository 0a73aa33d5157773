import t from 'tap';
import { readFile } from 'node:fs/promises';
import { packPool, writeRequestScript } from '../../bench/lua.js';

/** Reads entry `k` back the way the generated Lua's `pick` does (1-based there, 0-based here). */
function entry(bytes: Buffer, width: number, k: number): string {
  const at = k * width;
  const length = Number(bytes.toString('latin1', at, at + 4));
  return bytes.toString('utf8', at + 4, at + 4 + length);
}

t.test('a packed pool holds every value, in order, at a fixed width', async (t) => {
  const values = ['user_01', 'a', '', 'bench.user.12@example.com', 'zoë'];
  const { bytes, width } = packPool(values);
  t.equal(width, 4 + Buffer.byteLength('bench.user.12@example.com'));
  t.equal(bytes.length, values.length * width);
  t.same(values.map((_, k) => entry(bytes, width, k)), values);
  t.equal(bytes.toString('latin1', 4 * width, 4 * width + 4), '0004', 'the length counts bytes, not characters');
});

t.test('a million values pack (the bench pools a million users)', async (t) => {
  const values = Array.from({ length: 1_000_000 }, (_, k) => `user_${k}`);
  const { bytes, width } = packPool(values);
  t.equal(width, 4 + 'user_999999'.length);
  t.equal(entry(bytes, width, 999_999), 'user_999999');
});

t.test('a value too long for the length digits is refused', async (t) => {
  t.throws(() => packPool(['x'.repeat(10_000)]), /at most 9999 bytes/);
});

t.test('a script without pools has no pool helpers', async (t) => {
  const lua = await readFile(await writeRequestScript(t.testdir(), 'plain', { method: 'GET', path: '/health' }), 'utf8');
  t.notMatch(lua, /function pick|setpause/);
  t.match(lua, /return "GET " \.\. "\/health" \.\. " HTTP\/1\.1\\013\\010" \.\. static_headers \.\. "\\013\\010"/);
});

t.test('the script reads its pools packed and picks from them by one index', async (t) => {
  const dir = t.testdir();
  const users = ['user_1', 'user_22'];
  const script = await writeRequestScript(dir, 'probe', {
    method: 'PUT',
    path: '/users/{user}/data',
    body: '{"email":"{email}"}',
    pools: { user: users, email: ['a@example.com', 'bb@example.com'] },
  });
  const lua = await readFile(script, 'utf8');
  t.match(lua, /local pool_user = pool\(".*probe\.user\.pool", 11\)/);
  t.match(lua, /"\/users\/" \.\. pick\(pool_user, i\) \.\. "\/data"/);
  t.match(lua, /local body = .*pick\(pool_email, i\)/);
  t.match(lua, /static_headers = "Host: " \.\. wrk\.headers\["Host"\]/, 'the Host header wrk was given');
  t.match(lua, /return "PUT " \.\. .* \.\. static_headers \.\. "Content-Length: " \.\. #body \.\. "\\013\\010\\013\\010" \.\. body/);
  t.same(await readFile(`${dir}/probe.user.pool`), packPool(users).bytes);
});
