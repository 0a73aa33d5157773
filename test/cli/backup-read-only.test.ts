import t from 'tap';
import { chmodSync, constants, readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '../helpers/server.js';
import { runCli } from '../helpers/child.js';
import { heldCli } from '../helpers/held-cli.js';
import { dataDirDigest } from '../helpers/data-files.js';
import { storeDigest } from '../helpers/store-digest.js';
import { openStore } from '../../src/storage/store.js';

/** The bits of open flags that hold the access mode (Linux; `fs.constants` lacks it). */
const O_ACCMODE = 0o3;

/** The access mode (`O_RDONLY`, `O_RDWR`…) of every descriptor process `pid` holds on `file`, read from /proc. */
function accessModes(pid: number, file: string): number[] {
  return readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
    if (readlinkSync(`/proc/${pid}/fd/${fd}`) !== file) return [];
    const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'))![1];
    return [parseInt(flags, 8) & O_ACCMODE];
  });
}

const digestOf = async (dataDir: string) => {
  const store = openStore(dataDir, { readOnly: true });
  try {
    return storeDigest(store);
  } finally {
    await store.close();
  }
};

// Root ignores file modes, so read-only files alone would not show a write access: the data file's
// descriptors do (their open flags), and so does a data dir left as it was, modes included.
t.test('a backup opens the data dir read-only: read-only files stay as they were, and the copy holds their data', async (t) => {
  const dir = t.testdir();
  const dataDir = join(dir, 'data');
  const server = await startServer(t, { dataDir });
  const put = await server.request('PUT', `/applications/${server.app.id}/users/u1/data`, { app: server.app, body: { data: { email: 'u1@example.com' } } });
  t.equal(put.status, 200);
  await server.close();
  for (const name of readdirSync(dataDir)) chmodSync(join(dataDir, name), 0o400);
  const before = dataDirDigest(dataDir);

  const file = join(dir, 'backup.mdb');
  // Held once it syncs its copy (its first `open`), the data dir still open.
  const backingUp = await heldCli(t, dir, dataDir, 'open', ['backup', file]);
  const modes = accessModes(backingUp.pid, join(realpathSync(dataDir), 'data.mdb'));
  t.ok(modes.length > 0, 'the data file is open');
  t.same(modes, modes.map(() => constants.O_RDONLY), 'and only for reading');
  const backedUp = await backingUp.resume();
  t.equal(backedUp.code, 0, backedUp.output);
  t.equal(dataDirDigest(dataDir), before, 'not a byte nor a mode of the data dir changed');

  const restoredDir = join(dir, 'restored');
  const restored = await runCli(['restore', file], { dataDir: restoredDir });
  t.equal(restored.code, 0, restored.stderr);
  t.equal(await digestOf(restoredDir), await digestOf(dataDir), 'the restored copy holds the same data');
});
