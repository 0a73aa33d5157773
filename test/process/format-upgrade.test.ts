import t, { type Test } from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { readFileSync, statSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { compiledService } from '../helpers/build.js';
import { ENDS_WITH_TEST } from '../helpers/ends-with-test.js';
import { isRunning, isZombie } from '../helpers/process-state.js';
import { runEntry, startChildServer } from '../helpers/child.js';
import { format6DataDir, formatOf } from '../helpers/older-format.js';
import { FORMAT_VERSION } from '../../src/storage/migrations.js';
import { openStore } from '../../src/storage/store.js';
import { upgradeFailure } from '../../src/format-upgrade.js';
import { storeDigest } from '../helpers/store-digest.js';

t.test('a start on an older data dir moves it to this build\'s format in a process of its own, then serves it', async (t) => {
  const { dataDir, app, path, profile } = await format6DataDir(t);
  const server = await startChildServer(t, { dataDir });
  // One line per step: the last one's.
  const migrated = await server.waitForLog((entry) => entry.msg === 'migrated data format' && entry.to === FORMAT_VERSION);
  t.match(migrated, { from: FORMAT_VERSION - 1, to: FORMAT_VERSION });
  t.not(migrated.pid, server.child.pid, 'not the server: a process that ends, with the memory the migration took');
  const answer = await fetch(`${server.url}${path}`, { headers: { 'x-svc-app-key': app.key, 'x-svc-app-secret': app.secret } });
  t.equal(await answer.text(), profile, 'the profile it served before');
  server.child.kill('SIGTERM');
  await server.exited;
  t.equal(await formatOf(dataDir), FORMAT_VERSION);

  const again = await startChildServer(t, { dataDir });
  t.notOk(again.stdout().includes('migrated data format'), 'a data dir of this format starts without one');
});

t.test('the upgrade child runs with the server\'s node flags but the debugger\'s, also those whose value is an argument of its own', async (t) => {
  const { dataDir } = await format6DataDir(t);
  // Without `--inspect` these listen nowhere; left half in, their values would be the child's script.
  const server = await startChildServer(t, { dataDir, nodeFlags: ['--inspect-port', '0', '--inspect-publish-uid', 'http'] });
  const migrated = await server.waitForLog((entry) => entry.msg === 'migrated data format' && entry.to === FORMAT_VERSION);
  t.match(migrated, { from: FORMAT_VERSION - 1, to: FORMAT_VERSION });
});

t.test('an upgrade that fails stops the start with its reason, and the data dir keeps its format', async (t) => {
  // A format-6 record whose platform head is no JSON: the step cannot take the member card from it.
  const parts = ['{"svc_user":', '', '', '', '', ''].map((part) => Buffer.from(part));
  const header = Buffer.alloc(parts.length * 4);
  parts.forEach((part, i) => header.writeUInt32LE(part.length, i * 4));
  const { dataDir } = await format6DataDir(t, Buffer.concat([header, ...parts]));
  const start = await runEntry('main', [], { dataDir, env: { HOST: '127.0.0.1', PORT: '0' } });
  t.equal(start.code, 1);
  t.match(start.stderr, /^Cannot upgrade the data format: /m, 'the child says why');
  t.match(start.stderr, /^Cannot start: The data format upgrade of .* failed \(exit 1\); it is left in format 6$/m);
  t.equal(await formatOf(dataDir), 6);
});

/**
 * Starts the compiled server on `dataDir` (of an older format) and waits for the line that logs its
 * upgrade, which names the upgrade's child and the port answered on meanwhile; both processes are
 * killed when the test ends.
 */
async function serverUpgrading(t: Test, dataDir: string, port = 0) {
  const { NODE_OPTIONS: _tapHooks, ...env } = process.env;
  // Its upgrade's child inherits the flags and standard input, and so ends with this test process too.
  const server = spawn(process.execPath, [...ENDS_WITH_TEST, join(await compiledService(), 'src', 'main.js')], {
    env: { ...env, HOST: '127.0.0.1', PORT: String(port), SVC_PUBLIC_URL: 'http://svc.test', SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'info' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  t.teardown(() => server.kill('SIGKILL'));
  let stderr = '';
  server.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
  let stdout = '';
  server.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  /** The first log line (written or to come) whose message includes `text`. */
  const logged = (text: string) =>
    new Promise<Record<string, any>>((resolve) => {
      const check = () => {
        const line = stdout.split('\n').find((entry) => entry.includes(text));
        if (!line) return;
        server.stdout!.off('data', check);
        resolve(JSON.parse(line));
      };
      server.stdout!.on('data', check);
      check();
    });
  const upgrading = await logged('upgrading the data format');
  t.teardown(() => {
    try {
      process.kill(upgrading.child, 'SIGKILL');
    } catch {}
  });
  return { server, exited, upgrading, logged, stderr: () => stderr };
}

/** A port free now (the OS's pick, released at once). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

t.test('while its upgrade runs the server answers on its port: /health 503 upgrading, every other request 503 E_UNAVAILABLE with Retry-After; then it serves there', { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  const { dataDir, app, path, profile } = await format6DataDir(t, undefined, 20_000);
  const port = await freePort();
  const { upgrading, logged } = await serverUpgrading(t, dataDir, port);
  // Held still, the upgrade runs for as long as the test looks.
  process.kill(upgrading.child, 'SIGSTOP');
  t.ok(isRunning(upgrading.child), 'the upgrade is under way');
  t.equal(upgrading.port, port);
  const url = `http://127.0.0.1:${port}`;
  const credentials = { 'x-svc-app-key': app.key, 'x-svc-app-secret': app.secret };

  const health = await fetch(`${url}/health?probe=1`);
  t.equal(health.status, 503);
  t.equal(health.headers.get('retry-after'), '5');
  t.equal(health.headers.get('x-content-type-options'), 'nosniff');
  t.equal(health.headers.get('cache-control'), 'no-store');
  t.same(await health.json(), { status: 'upgrading' });
  const head = await fetch(`${url}/health`, { method: 'HEAD' });
  t.same([head.status, await head.text()], [503, ''], 'HEAD as GET, without the body');
  const refusal = {
    statusCode: 503,
    error: 'Service Unavailable',
    code: 'E_UNAVAILABLE',
    message: "The data is being upgraded to this build's format; try again shortly",
    messages: ["The data is being upgraded to this build's format; try again shortly"],
  };
  for (const [method, body] of [['GET', undefined], ['PUT', JSON.stringify({ data: { first_name: 'Grace' } })]] as const) {
    const answer = await fetch(`${url}${path}`, { method, body, headers: { ...credentials, 'content-type': 'application/json' } });
    t.equal(answer.status, 503, method);
    t.equal(answer.headers.get('retry-after'), '5', method);
    t.strictSame(await answer.json(), refusal, method);
  }
  t.equal((await fetch(`${url}/metrics`)).status, 503, 'no route is served');

  process.kill(upgrading.child, 'SIGCONT');
  const listening = await logged('"msg":"listening"');
  t.equal(listening.port, port, 'the server took the port over');
  const served = await fetch(`${url}/health`);
  t.same([served.status, await served.json()], [200, { status: 'ok' }]);
  const read = await fetch(`${url}${path}`, { headers: credentials });
  t.equal(await read.text(), profile, 'the profile it served before, the write refused meanwhile not applied');
});

t.test('a start on an older data dir whose port is taken stops before anything migrates', async (t) => {
  const { dataDir } = await format6DataDir(t);
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => taken.close());
  const { port } = taken.address() as AddressInfo;
  const start = await runEntry('main', [], { dataDir, env: { HOST: '127.0.0.1', PORT: String(port), SVC_LOG_LEVEL: 'info' } });
  t.equal(start.code, 1);
  t.match(start.stderr, /^Cannot start: Cannot listen on HOST=127\.0\.0\.1 PORT=\d+ \(is the port in use, or HOST not an address of this machine\?\)\n$/);
  t.notOk(start.stdout.includes('upgrading the data format'), 'no upgrade started');
  t.equal(await formatOf(dataDir), 6);
});

t.test('a stop asked of the server while its upgrade runs stops the upgrade: nothing is left migrating, and the data dir keeps its format', async (t) => {
  const { dataDir } = await format6DataDir(t, undefined, 50_000);
  const { server, exited, upgrading, stderr } = await serverUpgrading(t, dataDir);
  t.match(upgrading, { from: 6, to: FORMAT_VERSION, pid: server.pid });
  server.kill('SIGTERM');
  t.equal(await exited, 1, 'the start stops');
  t.match(stderr(), /failed \(signal SIGTERM\); it is left in format 6$/m);
  t.throws(() => process.kill(upgrading.child, 0), { code: 'ESRCH' }, 'its upgrade is not left running');
  t.equal(await formatOf(dataDir), 6);
});

/** Whether something answers HTTP on `port`. */
const answers = (port: number) => fetch(`http://127.0.0.1:${port}/health`).then(
  () => true,
  () => false,
);

t.test('a stop asked of the server while its upgrade runs closes the port at once, before the upgrade has stopped', { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  const { dataDir } = await format6DataDir(t, undefined, 20_000);
  const port = await freePort();
  const { server, exited, upgrading } = await serverUpgrading(t, dataDir, port);
  // Held still, the upgrade hears of the stop only once continued: its server waits for it meanwhile.
  process.kill(upgrading.child, 'SIGSTOP');
  t.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 503);
  server.kill('SIGTERM');
  const deadline = Date.now() + 5_000;
  while ((await answers(port)) && Date.now() < deadline) await sleep(10);
  t.notOk(await answers(port), 'nothing answers on the port');
  t.ok(isRunning(server.pid!), 'while the server still waits for its upgrade to stop');
  process.kill(upgrading.child, 'SIGCONT');
  t.equal(await exited, 1, 'the start stops, as it does on a stop while upgrading');
  t.equal(await formatOf(dataDir), 6);
});

/** Kills the server (`kill -9`) while its upgrade's child is held still, then lets the child go on: it must end. */
async function killServerUnder(t: Test, server: ChildProcess, exited: Promise<unknown>, child: number): Promise<void> {
  process.kill(child, 'SIGSTOP');
  server.kill('SIGKILL');
  await exited;
  process.kill(child, 'SIGCONT');
  const deadline = Date.now() + 10_000;
  while (isRunning(child) && Date.now() < deadline) await sleep(20);
  t.notOk(isRunning(child), 'its upgrade is not left running');
}

t.test('an upgrade whose server is killed (kill -9) stops: nothing migrates the data dir it no longer claims, which keeps its format', { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  const { dataDir } = await format6DataDir(t, undefined, 50_000);
  const { server, exited, upgrading } = await serverUpgrading(t, dataDir);
  // Once the child has mapped the data file, its first step (all 50 000 records) is under way.
  while (!readFileSync(`/proc/${upgrading.child}/maps`, 'utf8').includes(join(dataDir, 'data.mdb'))) await sleep(10);
  // Held still meanwhile: on a busy machine a sleep here let the step commit before the kill.
  await killServerUnder(t, server, exited, upgrading.child);
  t.equal(await formatOf(dataDir), 6, 'the step it was in is not committed');
});

t.test('an upgrade whose server is killed as the upgrade starts migrates nothing: no step runs before its watch has looked', { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  const { dataDir } = await format6DataDir(t);
  const { server, exited, upgrading } = await serverUpgrading(t, dataDir);
  // Held still as it starts (loading its modules): its small steps would each take a few milliseconds.
  await killServerUnder(t, server, exited, upgrading.child);
  t.equal(await formatOf(dataDir), 6, 'no step was committed');
});

t.test('a stop asked of the server as its upgrade ends is not lost: the server stops', { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  const { dataDir } = await format6DataDir(t);
  const { server, exited, upgrading } = await serverUpgrading(t, dataDir);
  // The server, held still, hears of the stop and of its upgrade's end at once, in either order.
  server.kill('SIGSTOP');
  while (!isZombie(upgrading.child)) await new Promise((resolve) => setTimeout(resolve, 10));
  server.kill('SIGTERM');
  server.kill('SIGCONT');
  // A server that lost the stop would serve on: this would never settle.
  t.equal(await exited, 0, 'the server stops, as it does on a stop once it serves');
  t.equal(await formatOf(dataDir), FORMAT_VERSION, 'with the upgrade it finished');
});

t.test('an upgrade that finds the disk full stops the start, and the data dir keeps its format', async (t) => {
  const { dataDir } = await format6DataDir(t, undefined, 20_000);
  // `ulimit -f` (in blocks of 512 bytes): the data file may not grow by the copy the step writes.
  const limitBlocks = Math.ceil(statSync(join(dataDir, 'data.mdb')).size / 512) + 64;
  const { NODE_OPTIONS: _tapHooks, ...env } = process.env;
  const main = join(await compiledService(), 'src', 'main.js');
  const start = spawn('/bin/sh', ['-c', `ulimit -f ${limitBlocks} && exec "$@"`, 'sh', process.execPath, ...ENDS_WITH_TEST, main], {
    env: { ...env, HOST: '127.0.0.1', PORT: '0', SVC_PUBLIC_URL: 'http://svc.test', SVC_DATA_DIR: dataDir },
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  t.teardown(() => start.kill('SIGKILL'));
  let stderr = '';
  start.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => start.once('close', (exitCode) => resolve(exitCode)));
  t.equal(code, 1, 'not a start that serves, nor one that ends as if done');
  t.match(stderr, /^Cannot start: The data format upgrade of .* failed \(exit 1\); it is left in format 6$/m);
  t.equal(await formatOf(dataDir), 6);
});

t.test('a failed upgrade names the format it leaves the data dir in: each step commits on its own', async (t) => {
  const dataDir = t.testdir();
  const store = openStore(dataDir);
  const stamp = (format: number) => store.commit(() => store.db('meta').put('format_version', format));
  await stamp(FORMAT_VERSION - 1);
  t.equal(await upgradeFailure(dataDir, 'exit 1'), `The data format upgrade of ${dataDir} failed (exit 1); it is left in format ${FORMAT_VERSION - 1}`);
  await stamp(FORMAT_VERSION);
  t.equal(
    await upgradeFailure(dataDir, 'signal SIGTERM'),
    `The data format upgrade of ${dataDir} ended (signal SIGTERM) once done: it has this build's format (${FORMAT_VERSION})`,
    'stopped as it ended, after its last step',
  );
  await store.close();
});

t.test('a start on a data dir of a newer format is refused with its reason, and writes nothing to it', async (t) => {
  const dataDir = t.testdir();
  const server = await startChildServer(t, { dataDir });
  server.child.kill('SIGTERM');
  await server.exited;
  const store = openStore(dataDir);
  await store.commit(() => store.db('meta').put('format_version', FORMAT_VERSION + 1));
  // As a newer build would leave it: a step of its own dropped databases this build opens at start.
  for (const name of ['apps', 'user_views', 'user_lookup', 'counters']) store.db(name).dropSync();
  const before = storeDigest(store);
  await store.close();

  const start = await runEntry('main', [], { dataDir, env: { HOST: '127.0.0.1', PORT: '0' } });
  t.equal(start.code, 1);
  t.match(start.stderr, new RegExp(`^Cannot start: Data dir .* has format ${FORMAT_VERSION + 1}, newer than this build understands \\(${FORMAT_VERSION}\\)$`, 'm'));
  const after = openStore(dataDir, { readOnly: true });
  t.teardown(() => after.close());
  t.equal(storeDigest(after), before, 'no database made again, nothing else written');
});
