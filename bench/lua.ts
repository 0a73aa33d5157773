import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * One kind of request wrk sends over and over. In `path`, header values and `body`, `{name}` is
 * replaced per request by a value of the pool `name` and `{n}` by a number unique to the run.
 * All pools are indexed by the same pick, so pools of equal length stay paired (user ↔ email).
 */
export interface RequestShape {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  pools?: Record<string, readonly string[]>;
  /** `random` (default) or `sequential` (a sweep: the k-th request takes entry k). */
  pick?: 'random' | 'sequential';
  /** Stop sending after this many requests (wrk itself still runs its full duration). */
  stopAfter?: number;
}

/** Lua string literal for ASCII-safe output. */
export function luaString(text: string): string {
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (char === '"' || char === '\\') out += '\\' + char;
    else if (code >= 0x20 && code < 0x7f) out += char;
    else for (const byte of Buffer.from(char, 'utf8')) out += '\\' + String(byte).padStart(3, '0');
  }
  return out + '"';
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** A Lua expression concatenating the template's literal parts with pool picks and the counter. */
function luaTemplate(template: string, pools: Record<string, unknown>): string {
  const parts: string[] = [];
  let last = 0;
  for (const match of template.matchAll(PLACEHOLDER)) {
    const name = match[1];
    if (name !== 'n' && !(name in pools)) throw new Error(`template ${template} names unknown pool {${name}}`);
    if (match.index! > last) parts.push(luaString(template.slice(last, match.index)));
    parts.push(name === 'n' ? 'run .. n' : `pick(pool_${name}, i)`);
    last = match.index! + match[0].length;
  }
  if (last < template.length) parts.push(luaString(template.slice(last)));
  return parts.length === 0 ? '""' : parts.join(' .. ');
}

const hasPlaceholder = (text: string) => new RegExp(PLACEHOLDER.source).test(text);

/** Digits of the byte length that starts each entry of a packed pool. */
const LENGTH_DIGITS = 4;

/**
 * A pool as one byte string of fixed-width entries: each its byte length in `LENGTH_DIGITS` decimal
 * digits, then its bytes padded with spaces to the widest. Answers the bytes and the entry width.
 */
export function packPool(values: readonly string[]): { bytes: Buffer; width: number } {
  // A loop, not `Math.max(...)`: a million arguments overflow the stack.
  const widest = values.reduce((most, value) => Math.max(most, Buffer.byteLength(value)), 0);
  if (widest >= 10 ** LENGTH_DIGITS) throw new Error(`pool values are at most ${10 ** LENGTH_DIGITS - 1} bytes`);
  const width = LENGTH_DIGITS + widest;
  const bytes = Buffer.alloc(values.length * width, ' ');
  values.forEach((value, k) => {
    const length = bytes.write(value, k * width + LENGTH_DIGITS);
    bytes.write(String(length).padStart(LENGTH_DIGITS, '0'), k * width);
  });
  return { bytes, width };
}

/**
 * Pools live in one Lua string each, not in a table of strings: wrk's garbage collector walks a
 * table's million strings on every cycle (a 1M-user ceiling fell from ~120k to 81–91k req/s, p99
 * 5–35 ms); one string is a single object. Collecting at 110% of the live heap keeps each cycle's
 * garbage, and so LuaJIT's string table, small (the default 200% gave p99 13–20 ms over a million
 * picks).
 */
const LUA_POOLS = [
  'collectgarbage("setpause", 110)',
  'local function pool(path, width)',
  '  local file = assert(io.open(path, "rb"))',
  '  local bytes = file:read("*a")',
  '  file:close()',
  '  return { bytes = bytes, width = width }',
  'end',
  'local function pick(p, i)',
  '  local at = (i - 1) * p.width + 1',
  `  local length = tonumber(p.bytes:sub(at, at + ${LENGTH_DIGITS - 1}))`,
  `  return p.bytes:sub(at + ${LENGTH_DIGITS}, at + ${LENGTH_DIGITS - 1} + length)`,
  'end',
];

/** Writes the pools and the wrk script into `dir`; answers the script's path. */
export async function writeRequestScript(dir: string, name: string, shape: RequestShape): Promise<string> {
  const pools = shape.pools ?? {};
  const lengths = new Set(Object.values(pools).map((values) => values.length));
  if (lengths.has(0)) throw new Error(`${name}: an empty pool`);
  const poolSize = Math.max(1, ...lengths);
  const lines: string[] = [...(Object.keys(pools).length > 0 ? LUA_POOLS : []), `local run = ${luaString(randomBytes(4).toString('hex') + '-')}`, 'local n = 0'];
  for (const [pool, values] of Object.entries(pools)) {
    const file = join(dir, `${name}.${pool}.pool`);
    const { bytes, width } = packPool(values);
    await writeFile(file, bytes);
    lines.push(`local pool_${pool} = pool(${luaString(file)}, ${width})`);
  }
  const headers = Object.entries(shape.headers ?? {});
  const headerLine = (name: string, value: string) => `${name}: ${value}\r\n`;
  const staticLines = headers.filter(([, value]) => !hasPlaceholder(value)).map(([name, value]) => headerLine(name, value));
  const dynamicHeaders = headers.filter(([, value]) => hasPlaceholder(value));
  // The request is put together in one concatenation, not by `wrk.format`: its table and its
  // `string.format` per header were most of wrk's garbage per request (p99 1.5–1.9 ms against 1.0 ms).
  const request = [
    luaString(`${shape.method} `),
    luaTemplate(shape.path, pools),
    luaString(' HTTP/1.1\r\n'),
    'static_headers',
    ...dynamicHeaders.map(([name, value]) => `${luaString(`${name}: `)} .. ${luaTemplate(value, pools)} .. ${luaString('\r\n')}`),
    shape.body === undefined ? luaString('\r\n') : `"Content-Length: " .. #body .. ${luaString('\r\n\r\n')} .. body`,
  ];
  lines.push(
    `local size = ${poolSize}`,
    'local static_headers',
    'init = function()',
    '  math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)") or "0", 16) % 100000)',
    // wrk knows the Host header (from the URL it was given) only once it calls `init`.
    `  static_headers = "Host: " .. wrk.headers["Host"] .. ${luaString('\r\n' + staticLines.join(''))}`,
    'end',
    'request = function()',
    '  n = n + 1',
    ...(shape.stopAfter === undefined ? [] : [`  if n > ${shape.stopAfter} then wrk.thread:stop() end`]),
    shape.pick === 'sequential' ? '  local i = (n - 1) % size + 1' : '  local i = math.random(size)',
    ...(shape.body === undefined ? [] : [`  local body = ${luaTemplate(shape.body, pools)}`]),
    `  return ${request.join(' .. ')}`,
    'end',
  );
  const script = join(dir, `${name}.lua`);
  await writeFile(script, lines.join('\n') + '\n');
  return script;
}

/** Expands the shape for its first pick, so the bench can probe it with one ordinary request. */
export function firstRequest(shape: RequestShape): { method: string; path: string; headers: Record<string, string>; body?: string } {
  const pools = shape.pools ?? {};
  const fill = (template: string) => template.replace(PLACEHOLDER, (_, name: string) => (name === 'n' ? 'probe-0' : pools[name][0]));
  const headers = Object.fromEntries(Object.entries(shape.headers ?? {}).map(([k, v]) => [k, fill(v)]));
  return { method: shape.method, path: fill(shape.path), headers, body: shape.body === undefined ? undefined : fill(shape.body) };
}

/** Raw Lua (for flows wrk chains itself, like invite → accept); written as-is. */
export async function writeRawScript(dir: string, name: string, source: string): Promise<string> {
  const script = join(dir, `${name}.lua`);
  await writeFile(script, source);
  return script;
}
