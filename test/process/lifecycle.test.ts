import t, { type Test } from 'tap';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { cpSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { logEntries, runCli, runEntry, startChildServer } from '../helpers/child.js';
import { loadConfig } from '../../src/config.js';
import { openServices, closeServices } from '../../src/services.js';

const ADMIN_TOKEN = 'lifecycle-admin-token-0123';

t.test('first start prints the default credentials once; they work against /hub/app-config', async (t) => {
  const dataDir = t.testdir();
  const first = await startChildServer(t, { dataDir });
  t.ok(first.defaultApp, first.stdout());
  const { id, key, secret } = first.defaultApp!;
  t.match(id, /^app_/);
  t.match(key, /^key_[a-z2-7]{24}$/);
  t.match(secret, /^sec_[A-Za-z0-9_-]{43}$/);
  const health = await fetch(`${first.url}/health`);
  t.same(await health.json(), { status: 'ok' });
  const config = await fetch(`${first.url}/hub/app-config`, { headers: { 'x-svc-app-key': key } });
  t.equal(config.status, 200);
  t.same(await config.json(), { app: { id, name: 'default', schema: { fields: {}, allow_unknown_fields: true } } });
  const unknown = await fetch(`${first.url}/hub/app-config`, { headers: { 'x-svc-app-key': 'key_unknown' } });
  t.equal(unknown.status, 401);
  first.child.kill('SIGTERM');
  t.same(await first.exited, { code: 0, signal: null });

  const second = await startChildServer(t, { dataDir });
  t.equal(second.defaultApp, undefined, 'a later start prints no credentials');
  t.notOk(second.stdout().includes(secret));
  const again = await fetch(`${second.url}/hub/app-config`, { headers: { 'x-svc-app-key': key } });
  t.equal(again.status, 200, 'the credentials outlive the restart');
  second.child.kill('SIGINT');
  t.same(await second.exited, { code: 0, signal: null }, 'SIGINT stops it cleanly too');
});

t.test('a bad configuration value stops the start with a clear message', async (t) => {
  const dataDir = t.testdir();
  const result = await runEntry('main', [], { dataDir, env: { PORT: 'abc', SVC_BRAND: 'Bad!' } });
  t.equal(result.code, 1);
  t.match(result.stderr, /Invalid configuration:\n\s+PORT: must be a whole number\n\s+SVC_BRAND: lowercase letters and digits only/);
  t.notMatch(result.stderr, /\bat \S+:\d+/, 'a message, not a stack trace');
  t.equal(result.stdout, '', 'nothing was started or printed');
});

t.test('a HOST that is no address stops the start with a message naming HOST', async (t) => {
  const dataDir = join(t.testdir(), 'data');
  // Brackets, a port or a scheme are no host: refused before anything is opened.
  for (const host of ['[::1]', '127.0.0.1:3000', 'http://localhost', 'a b']) {
    const result = await runEntry('main', [], { dataDir, env: { HOST: host, PORT: '0' } });
    t.equal(result.code, 1, host);
    t.match(result.stderr, /^Invalid configuration:\n\s+HOST: must be an IP address or a host name/, host);
    t.notOk(existsSync(dataDir), 'no data dir was made');
  }
  // An address of another machine (TEST-NET-1) is only found out when listening.
  const elsewhere = await runEntry('main', [], { dataDir, env: { HOST: '192.0.2.1', PORT: '0' } });
  t.equal(elsewhere.code, 1);
  t.match(elsewhere.stderr, /^Cannot start: Cannot listen on HOST=192\.0\.2\.1 PORT=0 \(is the port in use, or HOST not an address of this machine\?\)\n$/);
  t.equal(elsewhere.stdout, '', 'the failed start showed no secret');
});

t.test('PORT 0 without SVC_PUBLIC_URL stops the start: links and tokens would name http://localhost:0', async (t) => {
  const dataDir = join(t.testdir(), 'data');
  const result = await runEntry('main', [], { dataDir, env: { HOST: '127.0.0.1', PORT: '0', SVC_PUBLIC_URL: '' } });
  t.equal(result.code, 1);
  t.match(result.stderr, /Invalid configuration:\n\s+SVC_PUBLIC_URL: is required when PORT is 0 \(any free port\)/);
  t.equal(result.stdout, '', 'nothing was started or printed');
  t.notOk(existsSync(dataDir), 'no data dir was made');
});

t.test('a start that fails once listening (the default application finds the disk full) exits 1 and leaves no claim', async (t) => {
  const dataDir = join(t.testdir(), 'data');
  // All a start makes before it listens (format, pepper, signing key): only the default application is left to write.
  await closeServices(await openServices(loadConfig({ SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'silent' })));
  // Not on a page boundary: a write crosses the limit and fails (one starting at it would be ended by SIGXFSZ).
  const fileSizeLimitKiB = statSync(join(dataDir, 'data.mdb')).size / 1024 + 2;
  const failed = await runEntry('main', [], { dataDir, env: { HOST: '127.0.0.1', PORT: '0' }, fileSizeLimitKiB });
  t.same([failed.code, failed.signal], [1, null], 'not 0: a start that waited for the data dir to close ended as if done');
  t.match(failed.stderr, /^Cannot start: The change could not be stored; try again \(Input\/output error\)$/m, 'with what the storage failed with');
  t.notMatch(failed.stdout, /app secret|"listening"/, 'no secret shown, and never said to listen');
  t.notOk(existsSync(join(dataDir, 'server.pid')), 'the failed start left no claim');

  const next = await startChildServer(t, { dataDir });
  t.ok(next.defaultApp, 'the next start is not refused, and makes and shows the default application');
});

t.test('a first start whose disk fills up after the default application makes neither it nor its credential', async (t) => {
  const dir = t.testdir();
  const dataDir = join(dir, 'data');
  const open = () => openServices(loadConfig({ SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'silent' }));
  await closeServices(await open());
  // On a copy: how large the data file is once an application alone is written (a whole page more).
  const probeDir = join(dir, 'probe');
  cpSync(dataDir, probeDir, { recursive: true });
  const probe = await openServices(loadConfig({ SVC_DATA_DIR: probeDir, SVC_LOG_LEVEL: 'silent' }));
  await probe.apps.create('default');
  await closeServices(probe);
  // Room for the application's commit, not for a second one: its credential written apart finds the disk full.
  const fileSizeLimitKiB = statSync(join(probeDir, 'data.mdb')).size / 1024 + 2;
  const failed = await runEntry('main', [], { dataDir, env: { HOST: '127.0.0.1', PORT: '0' }, fileSizeLimitKiB });
  t.same([failed.code, failed.signal], [1, null], failed.stderr);
  t.notMatch(failed.stdout, /app secret/);
  const left = await open();
  t.same(left.apps.list(), [], 'no application without a credential is left behind');
  await closeServices(left);

  const next = await startChildServer(t, { dataDir });
  if (!t.ok(next.defaultApp, 'the next start makes and shows the default application')) return;
  const { id, key, secret } = next.defaultApp!;
  const used = await fetch(`${next.url}/applications/${id}/users/data`, { headers: { 'x-svc-app-key': key, 'x-svc-app-secret': secret } });
  t.equal(used.status, 200, 'and its credential works');
});

t.test('a data file cut short stops the start, the commands and verify with a message, not a SIGBUS', async (t) => {
  const dir = t.testdir();
  const dataDir = join(dir, 'data');
  t.equal((await runCli(['app', 'create', '--name', 'Shop'], { dataDir })).code, 0);
  const dataFile = join(dataDir, 'data.mdb');
  // What a copy of the data dir made by hand and cut short holds.
  const whole = readFileSync(dataFile);
  writeFileSync(dataFile, whole.subarray(0, whole.length / 2));
  const cutShort = /data\.mdb is not a whole LMDB file \(cut short, or not LMDB at all\): restore the data dir from a backup/;

  const start = await runEntry('main', [], { dataDir, env: { HOST: '127.0.0.1', PORT: '0' } });
  t.same([start.code, start.signal], [1, null], start.stderr);
  t.match(start.stderr, /^Cannot start: /);
  t.match(start.stderr, cutShort);
  t.notOk(existsSync(join(dataDir, 'server.pid')), 'the failed start left no claim');
  for (const args of [['app', 'list'], ['backup', join(dir, 'backup.mdb')]]) {
    const command = await runCli(args, { dataDir });
    t.same([command.code, command.signal], [1, null], args.join(' '));
    t.match(command.stderr, cutShort, args.join(' '));
  }
  const verified = await runCli(['verify'], { dataDir });
  t.same([verified.code, verified.signal], [1, null]);
  t.match(JSON.parse(verified.stdout).problems, [cutShort]);

  // An empty data file is a new one (a first start killed before LMDB wrote it): LMDB makes it.
  writeFileSync(dataFile, '');
  t.equal((await runCli(['app', 'create', '--name', 'Again'], { dataDir })).code, 0);
});

t.test('an empty data file holds no data: commands say so and make none, a restore needs no --force, a start makes it', async (t) => {
  const dir = t.testdir();
  // What a first start killed while LMDB opened its files leaves.
  const emptyDataDir = () => {
    const dataDir = join(dir, `empty-${Math.random().toString(36).slice(2)}`);
    mkdirSync(dataDir, { mode: 0o700 });
    writeFileSync(join(dataDir, 'data.mdb'), '');
    writeFileSync(join(dataDir, 'lock.mdb'), '');
    return dataDir;
  };
  const dataDir = emptyDataDir();
  const backup = join(dir, 'backup.mdb');
  for (const args of [['app', 'list'], ['keys', 'rotate'], ['credential', 'list', '--app', 'app_x'], ['verify'], ['backup', backup]]) {
    const command = await runCli(args, { dataDir });
    t.same([command.code, command.signal], [1, null], args.join(' '));
    t.match(command.stderr, /^error: \S+ holds no data/, args.join(' '));
  }
  t.equal(statSync(join(dataDir, 'data.mdb')).size, 0, 'none was made');
  t.notOk(existsSync(backup));

  const source = join(dir, 'source');
  t.equal((await runCli(['app', 'create', '--name', 'Shop'], { dataDir: source })).code, 0);
  t.equal((await runCli(['backup', backup], { dataDir: source })).code, 0);
  const restored = await runCli(['restore', backup], { dataDir });
  t.equal(restored.code, 0, `restored without --force: ${restored.stderr}`);
  t.same(JSON.parse((await runCli(['app', 'list'], { dataDir })).stdout).map((app: { name: string }) => app.name), ['Shop']);

  const started = await startChildServer(t, { dataDir: emptyDataDir() });
  t.ok(started.defaultApp, 'a start makes the data file, as on a new data dir');
});

for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
  t.test(`${signal} mid-request: the request in flight is answered and stored, then exit 0`, (t) => stopMidRequest(t, signal));
}

async function stopMidRequest(t: Test, signal: NodeJS.Signals) {
  const dataDir = t.testdir();
  const server = await startChildServer(t, { dataDir, env: { SVC_ADMIN_TOKEN: ADMIN_TOKEN, SVC_LOG_LEVEL: 'debug' } });
  const body = JSON.stringify({ name: 'made during shutdown' });
  // The body is sent in two parts so the request is in the server's hands, unfinished, when the signal lands.
  const req = httpRequest(`${server.url}/admin/applications`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
  });
  const response = new Promise<{ status: number; text: string; connection?: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, text, connection: res.headers.connection }));
    });
    req.on('error', reject);
  });
  req.write(body.slice(0, 5));
  await server.waitForLog((entry) => entry.msg === 'request started' && entry.route === 'POST /admin/applications');
  server.child.kill(signal);
  t.equal((await server.waitForLog((entry) => entry.msg === 'shutting down')).signal, signal);
  const refused = await fetch(`${server.url}/health`).then(
    (r) => r.status,
    () => 'refused',
  );
  t.equal(refused, 'refused', 'no new connection is accepted while draining');
  req.end(body.slice(5));
  const answered = await response;
  t.equal(answered.status, 200, answered.text);
  t.equal(answered.connection, 'close', 'a keep-alive client is told to take its next request elsewhere');
  const app = JSON.parse(answered.text);
  t.equal(app.name, 'made during shutdown');
  t.same(await server.exited, { code: 0, signal: null });

  const restarted = await startChildServer(t, { dataDir, env: { SVC_ADMIN_TOKEN: ADMIN_TOKEN } });
  const stored = await fetch(`${restarted.url}/admin/applications/${app.id}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  t.equal(stored.status, 200, 'the answered write was stored');
  t.same(await stored.json(), app);
}

/** A server (of `graceMs` shutdown grace) with one request in flight whose body never ends. */
async function serverWithStalledBody(t: Test, graceMs: string, dataDir = t.testdir()) {
  const server = await startChildServer(t, {
    dataDir,
    env: { SVC_ADMIN_TOKEN: ADMIN_TOKEN, SVC_LOG_LEVEL: 'debug', SVC_SHUTDOWN_GRACE_MS: graceMs },
  });
  const req = httpRequest(`${server.url}/admin/applications`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', 'content-length': 100 },
  });
  req.on('error', () => {});
  req.write('{"name":');
  await server.waitForLog((entry) => entry.msg === 'request started' && entry.route === 'POST /admin/applications');
  return server;
}

t.test('SIGTERM with a body that never ends: exit 0 after the grace period, the stall logged', async (t) => {
  const server = await serverWithStalledBody(t, '300');
  server.child.kill('SIGTERM');
  const stall = await server.waitForLog((entry) => typeof entry.msg === 'string' && entry.msg.startsWith('shutdown grace period over'));
  t.equal(stall.unanswered, 1);
  t.same(await server.exited, { code: 0, signal: null });
});

t.test('a stop asked again during the drain ends the process at once, saying so, with the writes answered before kept', async (t) => {
  const dataDir = t.testdir();
  // An hour's grace: unforced, the drain waits for the stalled body (uWebSockets.js's 10 s timeout cuts it) and exits 0.
  const server = await serverWithStalledBody(t, '3600000', dataDir);
  const made = await fetch(`${server.url}/admin/applications`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'answered before the stop' }),
  });
  t.equal(made.status, 200);
  const app = await made.json();
  server.child.kill('SIGTERM');
  await server.waitForLog((entry) => entry.msg === 'shutting down');
  server.child.kill('SIGINT');
  t.same(await server.exited, { code: null, signal: 'SIGKILL' }, 'ended at once, as by kill -9, the stalled request cut');
  const forced = logEntries(server.stdout()).find((entry) => entry.msg === 'stop asked again: exiting at once, cutting the requests in flight');
  t.match(forced, { level: 40, signal: 'SIGINT' }, server.stdout());
  t.notMatch(server.stdout(), /grace period over/, 'the grace was not waited out');

  const restarted = await startChildServer(t, { dataDir, env: { SVC_ADMIN_TOKEN: ADMIN_TOKEN } });
  const stored = await fetch(`${restarted.url}/admin/applications/${app.id}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  t.same(await stored.json(), app, 'the write answered before the forced stop is kept');
});

t.test('SIGTERM while a large answer is still being written to a slow reader: it arrives whole before the exit', async (t) => {
  const server = await startChildServer(t, { dataDir: t.testdir(), env: { SVC_LOG_LEVEL: 'debug', SVC_RATE_LIMIT_APP: '0' } });
  const app = server.defaultApp!;
  const credentials = { 'x-svc-app-key': app.key, 'x-svc-app-secret': app.secret };
  const users = 200;
  // 200 profiles of 60 kB: a 12 MB page, more than the socket buffers between server and client hold.
  const bio = 'x'.repeat(60_000);
  for (let i = 0; i < users; i++) {
    const res = await fetch(`${server.url}/applications/${app.id}/users/big-${i}/data`, {
      method: 'PUT',
      headers: { ...credentials, 'content-type': 'application/json' },
      body: JSON.stringify({ data: { bio } }),
    });
    const text = await res.text();
    if (res.status !== 200) return t.fail(`seeding answered ${res.status}: ${text.slice(0, 200)}`);
  }
  const socket = connect(server.port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk) => chunks.push(chunk));
  const closed = new Promise((resolve) => socket.on('close', resolve));
  socket.on('error', () => {});
  const head = Object.entries(credentials).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.write(`GET /applications/${app.id}/users/data?page_size=${users} HTTP/1.1\r\nhost: localhost\r\n${head}\r\n`);
  // The client reads nothing until the server has answered and is told to stop.
  socket.pause();
  await server.waitForLog((entry) => entry.msg === 'request' && entry.route === 'GET /applications/:app/users/data');
  server.child.kill('SIGTERM');
  await server.waitForLog((entry) => entry.msg === 'shutting down');
  socket.resume();
  await closed;
  const data = Buffer.concat(chunks);
  const bodyAt = data.indexOf('\r\n\r\n') + 4;
  const length = Number(/content-length: (\d+)/i.exec(data.subarray(0, bodyAt).toString('latin1'))?.[1]);
  t.equal(data.length - bodyAt, length, `the answer arrived whole (${data.length - bodyAt} of ${length} bytes)`);
  const page = JSON.parse(data.subarray(bodyAt).toString('utf8'));
  t.equal(page.results.length, users);
  t.ok(page.results.every((profile: { data: { bio: string } }) => profile.data.bio === bio), 'every profile in it intact');
  t.same(await server.exited, { code: 0, signal: null });
  t.notMatch(server.stdout(), /grace period over/, 'nothing was cut');
});
