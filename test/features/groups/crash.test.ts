import t from 'tap';
import { execFile, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../helpers/server.js';
import { tokenFor } from '../../helpers/tokens.js';
import { profileGroups } from './helpers.js';
import { verifyStore } from '../../../src/verify/invariants.js';
import { allInvariants } from '../../../src/verify/all.js';

// An acknowledged acceptance survives kill -9, and no acceptance is ever half applied: the invite
// and its member move in one commit, so after a crash they agree, and member_count agrees with both.

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const PUBLIC_URL = 'http://127.0.0.1:9';
const INVITES = 40;

/** The service compiled inside the checkout (so it resolves node_modules), run as a child process. */
async function startChild(dataDir: string): Promise<{ url: string; kill(): Promise<void> }> {
  const out = join(ROOT, 'dist', `groups-crash-${process.pid}`);
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  t.teardown(() => rm(out, { recursive: true, force: true }));
  await promisify(execFile)(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', out], { cwd: ROOT });
  const { NODE_OPTIONS: _tapHooks, ...env } = process.env;
  const child = spawn(process.execPath, [join(out, 'src', 'main.js')], {
    env: { ...env, SVC_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', SVC_PUBLIC_URL: PUBLIC_URL, SVC_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let stdout = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const listening = /"port":(\d+).*"msg":"listening"/.exec(stdout);
      if (listening) resolve(Number(listening[1]));
    });
    exited.then(() => reject(new Error(`the child exited before listening:\n${stdout}`)));
  });
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  t.teardown(kill);
  return { url: `http://127.0.0.1:${port}`, kill };
}

t.test('an acknowledged acceptance is never half applied after SIGKILL', async (t) => {
  const dataDir = t.testdir();
  const env = { SVC_PUBLIC_URL: PUBLIC_URL };

  const setup = await startServer(t, { dataDir, env });
  const app = setup.app;
  const owner = await tokenFor(setup, { email: 'owner@example.com' });
  const group = (await setup.request('POST', '/me/groups', { token: owner.token, body: { name: 'Crew' } })).body.group;
  const invited: Array<{ inviteId: string; userId: string; token: string }> = [];
  for (let i = 0; i < INVITES; i++) {
    const res = await setup.request('POST', `/applications/${app.id}/groups/${group.id}/invites`, {
      app,
      body: { email: `guest${i}@example.com`, roles: ['guest'] },
    });
    const userId = res.body.invitation.ensured_user_id;
    invited.push({ inviteId: res.body.invitation.id, userId, token: (await tokenFor(setup, { user_id: userId })).token });
  }
  await setup.close();

  const child = await startChild(dataDir);
  const acknowledged = new Set<string>();
  let firstAck!: () => void;
  const someAcknowledged = new Promise<void>((resolve) => (firstAck = resolve));
  const attempts = invited.map(({ inviteId, token }) =>
    fetch(`${child.url}/me/groups/${group.id}/invites/${inviteId}/accept`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    }).then(
      (res) => {
        if (res.status === 200) {
          acknowledged.add(inviteId);
          if (acknowledged.size >= 3) firstAck();
        }
      },
      () => undefined,
    ),
  );
  await Promise.race([someAcknowledged, Promise.all(attempts)]);
  await child.kill();
  await Promise.all(attempts);
  const seenAcks = new Set(acknowledged);
  t.ok(seenAcks.size >= 3, `some acceptances were acknowledged (${seenAcks.size})`);

  const after = await startServer(t, { dataDir, env });
  const { runtime } = after.deps;
  let accepted = 0;
  for (const { inviteId, userId } of invited) {
    const invite = runtime.read<any>('invite', [app.id, group.id, inviteId])!;
    const member = runtime.read<any>('member', [app.id, group.id, invite.context.member_id])!;
    const wanted = invite.state === 'accepted' ? 'active' : 'invite_pending';
    t.equal(member.state, wanted, `invite ${invite.state} and member ${member.state} agree`);
    if (seenAcks.has(inviteId)) t.equal(invite.state, 'accepted', 'an acknowledged acceptance survived');
    if (invite.state === 'accepted') accepted++;
    const pairs = profileGroups(after, userId, app.id);
    t.equal(pairs[0]?.member.state, wanted, "the user's profile agrees");
  }
  const stored = runtime.read<any>('group', [app.id, group.id])!;
  t.equal(stored.context.tally.active, 1 + accepted, 'member_count counts exactly the accepted and the owner');
  t.equal(profileGroups(after, owner.userId, app.id)[0].group.member_count, 1 + accepted, "the owner's profile shows that count");
  t.same(verifyStore(after.deps, allInvariants).problems, [], 'every stored invariant holds after the crash');
});
