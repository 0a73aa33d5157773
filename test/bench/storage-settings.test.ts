import t from 'tap';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { UsageError } from '../../bench/options.js';
import { STORAGE_SETTINGS, formatSettings, measureSetting, parseProbeOptions, selectedSettings } from '../../bench/storage-settings.js';

const probeDirs = () => readdirSync(tmpdir()).filter((name) => name.startsWith('svc-storage-probe-'));

t.test('the probe defaults to a million view-record-sized records and the bench load', async (t) => {
  t.same(parseProbeOptions([]), { records: 1_000_000, recordBytes: 1200, load: { seconds: 6, warmupSeconds: 2, connections: 64 }, only: [] });
  const options = parseProbeOptions(['--records', '5000', '--record-bytes', '600', '--seconds', '0.5', '--connections', '8', '--only', 'pages,noSync']);
  t.same(options, { records: 5000, recordBytes: 600, load: { seconds: 0.5, warmupSeconds: 2, connections: 8 }, only: ['pages', 'noSync'] });
  t.same(
    selectedSettings(options.only).map((setting) => setting.name),
    ['as served: 4 KiB pages, a child transaction per write', '8 KiB pages', '16 KiB pages', 'noSync: no fdatasync at all'],
  );
});

t.test('the probe refuses what it cannot take, saying how it is used', async (t) => {
  for (const argv of [['--records', '0'], ['--records', '1.5'], ['--seconds', 'soon'], ['--connections', '-1'], ['--unknown']]) {
    const error = t.throws(() => parseProbeOptions(argv), /usage: npm run bench:storage/, argv.join(' '));
    t.type(error, UsageError);
  }
});

t.test('each setting rewrites seeded records in an environment of its own, removed after', async (t) => {
  const before = probeDirs();
  const load = { seconds: 0.1, warmupSeconds: 0, connections: 4 };
  const measurements = [];
  for (const setting of STORAGE_SETTINGS) {
    const measured = await measureSetting(setting, { records: 300, recordBytes: 100, load });
    t.ok(measured.writes > 0, `${setting.name}: it wrote`);
    t.ok(measured.treeDepth >= 1, `${setting.name}: the records are in the tree`);
    // The setting's options reach the environment: the page size it asks for, else the OS's own (smaller).
    const asked = setting.options.pageSize;
    if (asked === undefined) t.ok(measured.pageSize < 8192, `${setting.name}: the OS's page size`);
    else t.equal(measured.pageSize, asked, `${setting.name}: the page size it asks for`);
    measurements.push(measured);
  }
  t.same(probeDirs(), before, 'no environment left behind');
  const table = formatSettings(measurements).split('\n');
  t.equal(table.length, 2 + STORAGE_SETTINGS.length, 'a header, a rule and a row per setting');
  t.match(table[2], /^as served.* yes .* 1\.00$/, 'the service\'s setting is the base of the ratios');
  t.match(table.at(-1), / NO /, 'a setting without a flush is marked not durable');
});
