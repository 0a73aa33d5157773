/**
 * What an entry point prints for a failure it did not foresee (a port in use, a read-only disk): the
 * message after `prefix`, an operator's to read, with its cause's (what a failed commit's storage
 * failed with), or the stack when `SVC_LOG_LEVEL` is debug or trace.
 */
export function failureText(error: unknown, prefix: string, env: Record<string, string | undefined>): string {
  const stack = error instanceof Error ? error.stack : undefined;
  if (stack && ['debug', 'trace'].includes(env.SVC_LOG_LEVEL ?? '')) return stack;
  if (!(error instanceof Error)) return `${prefix}${String(error)}`;
  return `${prefix}${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ''}`;
}
