import { runCli } from './cli/run.js';
import type { CliIo } from './cli/command.js';
import { failureText } from './lib/failure.js';

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
    process.stderr.write(`${failureText(error, 'error: ', process.env)}\n`);
    process.exitCode = 1;
  },
);
