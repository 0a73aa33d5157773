import pino, { type DestinationStream, type Logger } from 'pino';

/** Keys whose values are credentials or carry them; redacted wherever they appear in a log object. */
const SECRET_KEYS = new Set([
  'secret',
  'password',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'client_secret',
  'authorization',
  'cookie',
  'pepper',
  'headers',
  'body',
]);

const CENSOR = '[redacted]';

/** A value deeper than this is written `[too deep]`: a very deep object must not overflow the stack. */
const MAX_DEPTH = 100;

/**
 * `value` with every secret key's value censored, at any depth, as JSON.stringify would see it:
 * `value` itself when nothing in it is (the usual case: no copy), otherwise a copy of the objects on
 * the way down. A reference back to an object being walked (a cycle) is written `[Circular]`.
 */
function redact(value: unknown, ancestors: object[] = []): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (ancestors.includes(value)) return '[Circular]';
  if (ancestors.length >= MAX_DEPTH) return '[too deep]';
  const json: unknown = typeof (value as { toJSON?: unknown }).toJSON === 'function' ? (value as { toJSON(): unknown }).toJSON() : value;
  ancestors.push(value);
  try {
    if (json !== value) {
      const redacted = redact(json, ancestors);
      return redacted === json ? value : redacted;
    }
    return Array.isArray(value) ? redactItems(value, ancestors) : redactEntries(value as Record<string, unknown>, ancestors);
  } finally {
    ancestors.pop();
  }
}

function redactItems(items: unknown[], ancestors: object[]): unknown[] {
  let copy: unknown[] | undefined;
  for (let i = 0; i < items.length; i++) {
    const redacted = redact(items[i], ancestors);
    if (redacted !== items[i]) (copy ??= items.slice())[i] = redacted;
  }
  return copy ?? items;
}

function redactEntries(entries: Record<string, unknown>, ancestors: object[]): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(entries)) {
    const entry = entries[key];
    const redacted = SECRET_KEYS.has(key) && entry !== undefined ? CENSOR : redact(entry, ancestors);
    if (redacted !== entry) (copy ??= { ...entries })[key] = redacted;
  }
  return copy ?? entries;
}

/**
 * The one way the service builds its logger: JSON lines, with every secret-bearing key redacted at
 * any depth as a second line of defence (log calls name what they log and never pass headers or
 * bodies). pino's own `redact` takes fixed paths only. A call at a level that is off reaches none of
 * this: pino makes it a no-op.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    formatters: { log: redactFields },
    serializers: { err: (error: unknown) => redact(pino.stdSerializers.err(error as Error)) },
  };
  const logger = destination ? pino(options, destination) : pino(options);
  // pino hands a child's bindings to serializers only; a child is made from its parent
  // (Object.create), so every descendant inherits this.
  const child = logger.child;
  logger.child = function (this: Logger, bindings, childOptions) {
    return child.call(this, redact(bindings) as pino.Bindings, childOptions);
  } as typeof child;
  return logger;
}

/** The error key is left to the `err` serializer above: pino's error serializer needs the Error itself. */
function redactFields(fields: Record<string, unknown>): Record<string, unknown> {
  if (fields.err === undefined) return redact(fields) as Record<string, unknown>;
  const { err, ...rest } = fields;
  return { ...(redact(rest) as Record<string, unknown>), err };
}
