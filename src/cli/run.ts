import { parseArgs } from 'node:util';
import { loadConfig, ConfigError, type Env } from '../config.js';
import { ApiError, fieldErrorLines } from '../lib/errors.js';
import { BackupError } from '../storage/backup.js';
import { CommandError, UsageError, type CliIo, type Command } from './command.js';
import { commands } from './commands.js';

/** The command named by the longest matching run of leading words (`app create`, `backup`). */
function findCommand(argv: string[]): { name: string; command: Command; rest: string[] } | undefined {
  for (let words = Math.min(argv.length, 3); words > 0; words--) {
    const name = argv.slice(0, words).join(' ');
    if (Object.hasOwn(commands, name)) return { name, command: commands[name], rest: argv.slice(words) };
  }
  return undefined;
}

function usage(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  ${`${name} ${c.usage}`.padEnd(44)} ${c.summary}`);
  return ['Usage: npm run svc -- <command>', '', 'Commands:', ...lines].join('\n');
}

function parseCommandArgs(name: string, command: Command, rest: string[]) {
  const { values, positionals, tokens } = parseArgs({ args: rest, options: command.options ?? {}, allowPositionals: true, strict: true, tokens: true });
  // parseArgs keeps the last copy of an option given twice; which one the operator meant would be a guess.
  const given = tokens.flatMap((token) => (token.kind === 'option' ? [token.name] : []));
  const repeated = given.find((option, i) => given.indexOf(option) !== i);
  if (repeated !== undefined) throw new UsageError(`--${repeated} is given more than once`);
  const expected = command.positionals ?? [];
  if (positionals.length !== expected.length) {
    throw new UsageError(`${name} takes ${expected.length ? expected.join(' ') : 'no arguments'} (got ${positionals.length})`);
  }
  // `backup ""` would name the current directory.
  const empty = positionals.findIndex((value) => value === '');
  if (empty !== -1) throw new UsageError(`${name}: ${expected[empty]} is empty`);
  for (const option of command.required ?? []) {
    if (typeof values[option] !== 'string' || values[option] === '') throw new UsageError(`${name} needs --${option}`);
  }
  return { options: values as Record<string, string | boolean | undefined>, positionals };
}

/** Runs one command line; answers the exit code: 0 done, 1 failed, 2 called wrongly. */
export async function runCli(argv: string[], env: Env, io: CliIo): Promise<number> {
  const found = findCommand(argv);
  if (!found) {
    if (argv.length === 0 || argv[0] === 'help' || argv[0] === '--help') {
      io.print(usage());
      return 0;
    }
    io.note(`Unknown command: ${argv.join(' ')}\n\n${usage()}`);
    return 2;
  }
  const { name, command, rest } = found;
  try {
    const args = parseCommandArgs(name, command, rest);
    await command.run({ ...args, config: loadConfig(env), ...io });
    return 0;
  } catch (error) {
    if (error instanceof ApiError) {
      const details = error.fieldErrors ? fieldErrorLines(error.fieldErrors).map((m) => `\n  ${m}`).join('') : '';
      io.note(`error: ${error.message}${details}`);
      return 1;
    }
    if (error instanceof ConfigError || error instanceof BackupError || error instanceof CommandError) {
      io.note(`error: ${error.message}`);
      return 1;
    }
    const { code } = error as { code?: unknown };
    if (error instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))) {
      io.note(`error: ${(error as Error).message}\nusage: npm run svc -- ${name} ${command.usage}`);
      return 2;
    }
    throw error;
  }
}
