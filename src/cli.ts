import { runCli } from './cli/run.js';
import type { CliIo } from './cli/command.js';
import { failureText } from './lib/failure.js';
import { commitCause, isUnobservedCommitFailure } from './storage/store.js';

/** `npm run svc -- <command>`: the operator CLI (see src/cli/commands.ts). */
const io: CliIo = {
  print: (text) => process.stdout.write(`${text}\n`),
  note: (text) => process.stderr.write(`${text}\n`),
};

// A failed commit (a full disk) is heard only here: after one, lmdb-js never settles closing the data
// dir, so the command waits on it and its own error is never reported. The command ends here, failed:
// let go, as the server does, it would end as if done once nothing is left to wait for.
let failedWrite: Promise<void> | undefined;
process.on('unhandledRejection', (reason) => {
  if (!isUnobservedCommitFailure(reason)) throw reason;
  process.exitCode = 1;
  failedWrite ??= reportFailedWrite(reason);
});

async function reportFailedWrite(failure: unknown): Promise<void> {
  const error = new Error('a write to the data dir failed and was not made', { cause: await commitCause(failure) });
  process.stderr.write(`${failureText(error, 'error: ', process.env)}\n`);
  process.exit(1);
}

runCli(process.argv.slice(2), process.env, io).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`${failureText(error, 'error: ', process.env)}\n`);
    process.exitCode = 1;
  },
);
