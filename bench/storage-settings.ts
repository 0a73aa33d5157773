import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { ENV_OPTIONS } from '../src/storage/store.js';
import { USER_VIEWS_DB } from '../src/features/users/profile-views.js';
import { newId } from '../src/lib/ids.js';
import { measureLanes, type LaneLoad, type LaneMeasurement } from './lanes.js';
import { numberOption, parseCommandLine } from './options.js';
import { formatColumns } from './report.js';

/**
 * One way of storing profile writes: the environment's options beyond the store's own
 * (`ENV_OPTIONS`), and how each write is committed.
 */
export interface StorageSetting {
  name: string;
  /** Whether a write is answered only once it is flushed to disk, as the service answers writes. */
  durable: boolean;
  /** lmdb-js options for the environment (a page size applies to a new environment only). */
  options: Record<string, unknown>;
  /** `child transaction`: as `Store.commit` commits a turn; `put`: one plain put, no callback in the transaction. */
  write: 'child transaction' | 'put';
}

/** The settings the probe compares, the service's own first: each changes one thing from it. */
export const STORAGE_SETTINGS: readonly StorageSetting[] = [
  { name: 'as served: 4 KiB pages, a child transaction per write', durable: true, options: {}, write: 'child transaction' },
  { name: 'a plain put per write', durable: true, options: {}, write: 'put' },
  { name: '8 KiB pages', durable: true, options: { pageSize: 8192 }, write: 'child transaction' },
  { name: '16 KiB pages', durable: true, options: { pageSize: 16384 }, write: 'child transaction' },
  { name: 'overlappingSync off: the flush inside the commit', durable: true, options: { overlappingSync: false }, write: 'child transaction' },
  // Child transactions are refused with a write map.
  { name: 'write map (useWritemap), a plain put per write', durable: true, options: { useWritemap: true }, write: 'put' },
  { name: 'noSync: no fdatasync at all', durable: false, options: { noSync: true }, write: 'child transaction' },
];

export interface ProbeOptions {
  records: number;
  recordBytes: number;
  load: LaneLoad;
  /** Settings whose name contains one of these fragments; all when empty. */
  only: string[];
}

export interface SettingMeasurement extends LaneMeasurement {
  setting: StorageSetting;
  /** The B-tree's depth after seeding. */
  treeDepth: number;
  /** The environment's page size, as LMDB made it. */
  pageSize: number;
  seedSeconds: number;
}

const USAGE = 'usage: npm run bench:storage -- [--records N] [--record-bytes B] [--seconds S] [--warmup S] [--connections C] [--only NAME[,NAME]]';

export function parseProbeOptions(argv: string[]): ProbeOptions {
  const parsed = parseCommandLine(
    argv,
    {
      records: { type: 'string', default: '1000000' },
      'record-bytes': { type: 'string', default: '1200' },
      seconds: { type: 'string', default: '6' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '64' },
      only: { type: 'string', default: '' },
    },
    USAGE,
  );
  /** Seconds may have a fraction; counts are whole. */
  const number = (name: keyof typeof parsed, min: number, fraction = false) => numberOption(name, parsed[name], min, { fraction, usage: USAGE });
  return {
    records: number('records', 1),
    recordBytes: number('record-bytes', 1),
    load: { seconds: number('seconds', 0.1, true), warmupSeconds: number('warmup', 0, true), connections: number('connections', 1) },
    only: parsed.only.split(',').filter(Boolean),
  };
}

export const selectedSettings = (only: readonly string[]) =>
  STORAGE_SETTINGS.filter((setting) => only.length === 0 || only.some((fragment) => setting.name.includes(fragment)));

const SEED_BATCH = 10_000;

/**
 * In a new environment of its own (removed after), `records` records of `recordBytes` under keys
 * shaped as the service's view records (`[appId, userId]`), then `load`'s lanes each rewriting a
 * random record unchanged, one awaited write at a time: the storage floor, under `setting`.
 */
export async function measureSetting(setting: StorageSetting, options: Omit<ProbeOptions, 'only'>): Promise<SettingMeasurement> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-storage-probe-'));
  try {
    const root = open({ path: dir, ...ENV_OPTIONS, ...setting.options });
    try {
      const records = root.openDB<Buffer, string[]>({ name: USER_VIEWS_DB, encoding: 'binary' });
      const appId = newId('app');
      const userIds = Array.from({ length: options.records }, () => newId('user'));
      const value = randomBytes(options.recordBytes);
      const seedStart = performance.now();
      for (let from = 0; from < userIds.length; from += SEED_BATCH) {
        await root.transaction(() => {
          for (const userId of userIds.slice(from, from + SEED_BATCH)) records.put([appId, userId], value);
        });
      }
      const seedSeconds = (performance.now() - seedStart) / 1000;
      // Async, so a missing record rejects and stops every lane, as measureLanes does with a failure.
      const rewrite = async () => {
        const key = [appId, userIds[Math.floor(Math.random() * userIds.length)]];
        const record = records.getBinary(key);
        if (!record) throw new Error(`no record for ${key[1]}`);
        await (setting.write === 'put' ? records.put(key, record) : root.childTransaction(() => records.put(key, record)));
      };
      const measured = await measureLanes(options.load, rewrite);
      const { treeDepth, pageSize } = records.getStats() as { treeDepth: number; pageSize: number };
      return { ...measured, setting, treeDepth, pageSize, seedSeconds };
    } finally {
      await root.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function formatSettings(measurements: readonly SettingMeasurement[]): string {
  const base = measurements.find((m) => m.setting === STORAGE_SETTINGS[0])?.writesPerSecond;
  const header = ['setting', 'durable', 'writes/s', 'p50 ms', 'p99 ms', 'cpu µs/write', 'depth', base ? '× as served' : ''];
  const rows = measurements.map((m) => [
    m.setting.name,
    m.setting.durable ? 'yes' : 'NO',
    Math.round(m.writesPerSecond).toLocaleString('en-US'),
    m.p50Ms.toFixed(2),
    m.p99Ms.toFixed(2),
    m.cpuMicrosPerWrite.toFixed(1),
    String(m.treeDepth),
    base ? (m.writesPerSecond / base).toFixed(2) : '',
  ]);
  return formatColumns(header, rows);
}
