import t from 'tap';
import { runCli } from '../helpers/child.js';
import { format6DataDir, formatOf } from '../helpers/older-format.js';
import { claimDataDir } from '../../src/storage/server-claim.js';
import { FORMAT_VERSION } from '../../src/storage/migrations.js';

t.test('a command leaves the format of a data dir a server serves: that server, of an older build, could not read the next one', async (t) => {
  const { dataDir } = await format6DataDir(t);
  // This process stands for a server of the build before, still serving format 6.
  const release = claimDataDir(dataDir);
  t.teardown(release);
  for (const args of [['app', 'list'], ['app', 'create', '--name', 'Shop'], ['keys', 'rotate']]) {
    const refused = await runCli(args, { dataDir });
    t.equal(refused.code, 1, args.join(' '));
    t.match(refused.stderr, new RegExp(`^error: .* is served by process ${process.pid} in data format 6, older than this build's`, 'm'));
    t.equal(refused.stdout, '');
  }
  t.equal(await formatOf(dataDir), 6, 'the data dir keeps its format');

  release();
  const listed = await runCli(['app', 'list'], { dataDir });
  t.equal(listed.code, 0, 'served by no one, it is moved by the command');
  t.equal(await formatOf(dataDir), FORMAT_VERSION);
});
