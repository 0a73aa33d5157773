/**
 * What an entry point prints for a failure it did not foresee (a port in use, a read-only disk): the
 * message after `prefix`, an operator's to read, or the stack when `SVC_LOG_LEVEL` is debug or trace.
 */
export function failureText(error: unknown, prefix: string, env: Record<string, string | undefined>): string {
  const stack = error instanceof Error ? error.stack : undefined;
  if (stack && ['debug', 'trace'].includes(env.SVC_LOG_LEVEL ?? '')) return stack;
  return `${prefix}${error instanceof Error ? error.message : String(error)}`;
}
