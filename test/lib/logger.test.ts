import t from 'tap';
import type { DestinationStream } from 'pino';
import { createLogger } from '../../src/lib/logger.js';

// The keys the logger promises to redact (src/lib/logger.ts), pinned here so that none drops out.
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
const CENSOR = '[redacted]';
const SECRET = 'sec_live_value_never_logged';

function capture(level = 'info'): { logger: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const destination: DestinationStream = { write: (line: string) => void lines.push(line) };
  return { logger: createLogger(level, destination), lines };
}

/** leaf's keys at `depth` (1: leaf is the logged object; 2: `{ a: leaf }`; …). */
function nest(depth: number, leaf: object): Record<string, unknown> {
  let value = leaf as Record<string, unknown>;
  for (let i = 1; i < depth; i++) value = { a: value };
  return value;
}

function dig(value: any, depth: number): any {
  for (let i = 1; i < depth; i++) value = value.a;
  return value;
}

t.test('a secret key is redacted at any depth, under every key of the list; other values are kept', async (t) => {
  for (const key of SECRET_KEYS) {
    for (let depth = 1; depth <= 5; depth++) {
      const { logger, lines } = capture();
      logger.info(nest(depth, { [key]: SECRET, kept: 'plain', n: 7 }), 'm');
      t.equal(lines.length, 1);
      t.notMatch(lines[0], SECRET, `${key} at depth ${depth}: not in the line`);
      const logged = dig(JSON.parse(lines[0]), depth);
      t.has(logged, { [key]: CENSOR, kept: 'plain', n: 7 }, `${key} at depth ${depth}`);
    }
  }
});

t.test('a secret key holding an object or an array is redacted whole', async (t) => {
  const { logger, lines } = capture();
  logger.info({ a: { b: { headers: { host: 'h', authorization: `Bearer ${SECRET}` }, body: [SECRET] } } }, 'm');
  t.notMatch(lines[0], SECRET);
  t.same(JSON.parse(lines[0]).a.b, { headers: CENSOR, body: CENSOR });
});

t.test('secrets inside arrays, at any depth, are redacted; array items and order are kept', async (t) => {
  const { logger, lines } = capture();
  logger.info({ list: [1, 'two', { token: SECRET, k: 3 }, [[{ a: { pepper: SECRET } }]], null] }, 'm');
  t.notMatch(lines[0], SECRET);
  t.same(JSON.parse(lines[0]).list, [1, 'two', { token: CENSOR, k: 3 }, [[{ a: { pepper: CENSOR } }]], null]);
});

t.test('the logged object itself is left as the caller built it', async (t) => {
  const { logger } = capture();
  const inner = { secret: SECRET };
  const fields = { a: { b: inner }, list: [inner] };
  logger.info(fields, 'm');
  t.equal(fields.a.b, inner);
  t.equal(fields.list[0], inner);
  t.equal(inner.secret, SECRET);
});

t.test('an object with a cycle is logged, redacted, without a crash or a hang', async (t) => {
  const { logger, lines } = capture();
  const root: Record<string, any> = { name: 'root' };
  root.self = root;
  root.inner = { secret: SECRET, up: root, list: [root] };
  logger.info({ a: { b: root } }, 'm');
  t.equal(lines.length, 1);
  t.notMatch(lines[0], SECRET);
  const logged = JSON.parse(lines[0]).a.b;
  t.equal(logged.name, 'root');
  t.equal(logged.inner.secret, CENSOR);
});

t.test('an object shared by two branches (no cycle) is logged, redacted, in both', async (t) => {
  const { logger, lines } = capture();
  const shared = { token: SECRET, k: 1 };
  logger.info({ x: { shared }, y: [shared] }, 'm');
  const logged = JSON.parse(lines[0]);
  t.same(logged.x.shared, { token: CENSOR, k: 1 });
  t.same(logged.y, [{ token: CENSOR, k: 1 }]);
});

t.test('an error keeps its type, message and stack; a secret among its own properties is redacted', async (t) => {
  const { logger, lines } = capture();
  const error = Object.assign(new TypeError('it broke'), { code: 'E_X', request: { headers: { cookie: SECRET } }, detail: { token: SECRET } });
  logger.error({ err: error, nested: { error } }, 'failed');
  t.notMatch(lines[0], SECRET);
  const logged = JSON.parse(lines[0]);
  t.equal(logged.err.type, 'TypeError');
  t.equal(logged.err.message, 'it broke');
  t.match(logged.err.stack, /TypeError: it broke/);
  t.equal(logged.err.code, 'E_X');
  t.same(logged.err.request, { headers: CENSOR });
  t.same(logged.err.detail, { token: CENSOR });
  t.same(logged.nested.error.detail, { token: CENSOR });
  t.equal(error.detail.token, SECRET, 'the error itself is left alone');
});

t.test('an error given alone, and a value with toJSON, are logged as before', async (t) => {
  const { logger, lines } = capture();
  logger.error(Object.assign(new Error('alone'), { secret: SECRET }));
  const when = new Date(0);
  logger.info({ at: { when }, url: new URL('https://app.example/x') }, 'dated');
  t.notMatch(lines.join(''), SECRET);
  const [alone, dated] = lines.map((line) => JSON.parse(line));
  t.equal(alone.msg, 'alone');
  t.equal(alone.err.type, 'Error');
  t.equal(alone.err.secret, CENSOR);
  t.equal(dated.at.when, when.toISOString());
  t.equal(dated.url, 'https://app.example/x');
});

t.test("a child logger's bindings are redacted too, and a grandchild's", async (t) => {
  const { logger, lines } = capture();
  const child = logger.child({ ctx: { a: { token: SECRET } }, kept: 1 });
  child.info('m');
  child.child({ more: [{ cookie: SECRET }] }).info('m');
  t.notMatch(lines.join(''), SECRET);
  const [logged, grand] = lines.map((line) => JSON.parse(line));
  t.same(logged.ctx, { a: { token: CENSOR } });
  t.equal(logged.kept, 1);
  t.same(grand.more, [{ cookie: CENSOR }]);
  t.equal(grand.kept, 1);
});

t.test('a call at a level that is off does not look at its object', async (t) => {
  const { logger, lines } = capture('info');
  let reads = 0;
  const fields = {
    get a() {
      reads++;
      return { token: SECRET };
    },
  };
  logger.debug(fields, 'request');
  t.equal(reads, 0);
  t.same(lines, []);
});

t.test('an object nested deeper than the stack allows is logged, cut, without a crash', async (t) => {
  const { logger, lines } = capture();
  logger.info(nest(100_000, { token: SECRET }), 'deep');
  t.equal(lines.length, 1);
  t.notMatch(lines[0], SECRET);
  t.equal(JSON.parse(lines[0]).msg, 'deep');
});
