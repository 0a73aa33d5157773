import t from 'tap';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../helpers/child.js';

t.test('a command whose write finds the disk full fails with a message naming the cause and exit 1, and its change is not made', async (t) => {
  const dir = t.testdir();
  const dataDir = join(dir, 'data');
  t.equal((await runCli(['app', 'create', '--name', 'First'], { dataDir })).code, 0);
  // An application record of some 20 kB: more than the pages a fresh data file has free.
  const fields = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`field_${i}_${'x'.repeat(50)}`, { type: 'string' }]));
  writeFileSync(join(dir, 'schema.json'), JSON.stringify({ fields }));

  // Room for half a page of it: a write crosses the limit and fails (one starting at it would be ended by SIGXFSZ).
  const fileSizeLimitKiB = statSync(join(dataDir, 'data.mdb')).size / 1024 + 2;
  const full = await runCli(['app', 'create', '--name', 'Big', '--schema', join(dir, 'schema.json')], { dataDir, fileSizeLimitKiB });
  t.equal(full.code, 1, 'not 0: a command that waited forever for its data dir to close ended as if done');
  // What the storage failed with, as lmdb-js reports a write past `ulimit -f` (the server's full-disk test sees errno 5 too).
  t.match(full.stderr, /^error: a write to the data dir failed and was not made \(Input\/output error\)$/m, 'a message of its own, naming the cause');
  t.notMatch(full.stderr, /commitError|^Node\.js v/m, 'not the crash of an unhandled rejection');
  t.equal(full.stdout, '');

  const listed = await runCli(['app', 'list'], { dataDir });
  t.same(JSON.parse(listed.stdout).map((app: { name: string }) => app.name), ['First']);
});
