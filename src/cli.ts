import { runCli } from './cli/run.js';
import type { CliIo } from './cli/command.js';

/** `npm run svc -- <command>`: the operator CLI (see src/cli/commands.ts). */
const io: CliIo = {
  print: (text) => process.stdout.write(`${text}\n`),
  note: (text) => process.stderr.write(`${text}\n`),
};

runCli(process.argv.slice(2), process.env, io).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    // A failure the command did not foresee (a read-only disk, a missing directory): its message, the
    // stack only at debug level.
    const debug = ['debug', 'trace'].includes(process.env.SVC_LOG_LEVEL ?? '');
    process.stderr.write(`${debug && error?.stack ? error.stack : `error: ${error?.message ?? String(error)}`}\n`);
    process.exitCode = 1;
  },
);
