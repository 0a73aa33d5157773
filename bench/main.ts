import { UsageError } from './options.js';

/** `EX_USAGE` (sysexits.h): what every bench command exits with when its command line is wrong. */
export const USAGE_EXIT = 64;

/**
 * Runs a bench command's `main` and exits with the code it answers: for a command line it cannot take
 * (`UsageError`) with the problem and the usage and `USAGE_EXIT`, for any other failure with its stack and 1.
 */
export function runMain(
  main: () => Promise<number>,
  exit: (code: number) => void = process.exit,
  stderr: { write(text: string): unknown } = process.stderr,
): Promise<void> {
  return main().then(exit, (error: unknown) => {
    const usage = error instanceof UsageError;
    stderr.write(`${usage ? error.message : ((error as Error)?.stack ?? String(error))}\n`);
    exit(usage ? USAGE_EXIT : 1);
  });
}
