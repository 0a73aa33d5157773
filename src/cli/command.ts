import type { ParseArgsConfig } from 'node:util';
import type { Config } from '../config.js';

export type CommandOptions = NonNullable<ParseArgsConfig['options']>;

/** Where a command's output goes. */
export interface CliIo {
  /** Writes one result to stdout (JSON for anything structured, so scripts can read it). */
  print(text: string): void;
  /** Writes a note for the operator to stderr. */
  note(text: string): void;
}

export interface CommandInput extends CliIo {
  /** Parsed `--name value` options. */
  options: Record<string, string | boolean | undefined>;
  /** Arguments after the command name that are not options, as many as `Command.positionals` names. */
  positionals: string[];
  config: Config;
}

/** One CLI command: `npm run svc -- <name> <options>`. */
export interface Command {
  /** Option part of the usage line: `--name N [--schema FILE]`. */
  usage: string;
  summary: string;
  options?: CommandOptions;
  /** Options that must be given. */
  required?: readonly string[];
  /** Names of the arguments the command takes after its name, all required. */
  positionals?: readonly string[];
  run(input: CommandInput): Promise<void>;
}

/** A mistake in how the command was called: answered with the usage, exit code 2. */
export class UsageError extends Error {}

/** A command that cannot be carried out as asked (no data dir where one was named): its message, exit code 1. */
export class CommandError extends Error {}

export const asJson = (value: unknown) => JSON.stringify(value, null, 2);
