import pino, { type DestinationStream, type Logger } from 'pino';

/** Keys whose values are credentials or carry them; redacted wherever they appear in a log object. */
const SECRET_KEYS = [
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
];

/**
 * The one way the service builds its logger: JSON lines, with every secret-bearing key redacted as a
 * second line of defence (log calls name what they log and never pass headers or bodies).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const paths = SECRET_KEYS.flatMap((key) => [key, `*.${key}`]);
  const options = { level, redact: { paths, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}
