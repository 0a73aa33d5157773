import t from 'tap';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { runCli, runEntry, startChildServer } from '../helpers/child.js';

t.test('one server per data dir: a second is refused, a killed one\'s claim is taken over, a stopped one leaves none', async (t) => {
  const dir = t.testdir();
  const dataDir = join(dir, 'data');
  const first = await startChildServer(t, { dataDir });
  t.ok(existsSync(join(dataDir, 'server.pid')));

  const second = await runEntry('main', [], { dataDir, env: { HOST: '127.0.0.1', PORT: '0' } });
  t.equal(second.code, 1, 'a second server on the same data dir does not start');
  t.match(second.stderr, new RegExp(`is served by process ${first.child.pid}`));
  t.notMatch(second.stderr, /\n\s+at /, 'a message, not a stack trace');
  t.equal((await fetch(`${first.url}/health`)).status, 200, 'the first one serves on');

  const backup = join(dir, 'backup.mdb');
  t.equal((await runCli(['backup', backup], { dataDir })).code, 0, 'a backup beside a running server is fine');
  const ontoLive = await runCli(['backup', join(dataDir, 'data.mdb'), '--force'], { dataDir });
  t.equal(ontoLive.code, 1, 'a backup never replaces the data dir\'s own file');
  const restore = await runCli(['restore', backup, '--force'], { dataDir });
  t.equal(restore.code, 1, 'a restore under a running server is refused, --force or not');
  t.match(restore.stderr, /is served by process/);
  t.equal((await fetch(`${first.url}/health`)).status, 200);

  first.child.kill('SIGKILL');
  await first.exited;
  t.ok(existsSync(join(dataDir, 'server.pid')), 'a killed server leaves its claim');
  const third = await startChildServer(t, { dataDir });
  t.equal((await fetch(`${third.url}/health`)).status, 200, 'which the next start takes over');
  third.child.kill('SIGTERM');
  t.same(await third.exited, { code: 0, signal: null });
  t.notOk(existsSync(join(dataDir, 'server.pid')), 'a clean stop releases the claim');
});

/** A port free a moment ago. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

t.test('one server per port: a second on the port in use does not start, whatever its data dir', async (t) => {
  const dir = t.testdir();
  const port = String(await freePort());
  const first = await startChildServer(t, { dataDir: join(dir, 'a'), env: { PORT: port } });
  const second = await runEntry('main', [], { dataDir: join(dir, 'b'), env: { HOST: '127.0.0.1', PORT: port } });
  t.equal(second.code, 1, 'refused rather than sharing the port');
  t.match(second.stderr, /^Cannot start: Cannot listen on 127\.0\.0\.1:\d+ \(is the port in use\?\)\n$/);
  t.equal(second.stdout, '', 'the failed start showed no secret');
  for (let i = 0; i < 10; i++) t.equal((await fetch(`${first.url}/health`)).status, 200);
  const elsewhere = await startChildServer(t, { dataDir: join(dir, 'b') });
  t.ok(elsewhere.defaultApp, 'the first start that listens is the one that makes and shows the default application');
});
