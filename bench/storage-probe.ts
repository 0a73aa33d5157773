import { writeResults } from './report.js';
import { runMain } from './main.js';
import { formatSettings, measureSetting, parseProbeOptions, selectedSettings, type SettingMeasurement } from './storage-settings.js';

// The storage probe: the storage floor (durable record rewrites, no HTTP, no service code) on a
// synthetic store of view-record-sized values, under each LMDB setting of STORAGE_SETTINGS, to tell
// what limits durable profile writes at a given number of users: the disk, or lmdb-js's settings.
// `npm run bench:storage -- [--records 1000000] [--record-bytes 1200] [--seconds 6] [--only NAME]`.

const log = (message: string) => process.stderr.write(`[storage ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

async function main(): Promise<number> {
  const options = parseProbeOptions(process.argv.slice(2));
  const startedAt = new Date();
  const measurements: SettingMeasurement[] = [];
  for (const setting of selectedSettings(options.only)) {
    log(`${setting.name}: ${options.records} records of ${options.recordBytes} bytes, ${options.load.connections} lanes, ${options.load.seconds}s`);
    const measured = await measureSetting(setting, options);
    log(`  seeded in ${measured.seedSeconds.toFixed(1)}s; ${Math.round(measured.writesPerSecond)} writes/s`);
    measurements.push(measured);
  }
  process.stdout.write(`\n${formatSettings(measurements)}\n\n`);
  const file = await writeResults({ kind: 'storage-settings', startedAt: startedAt.toISOString(), options, measurements }, startedAt);
  process.stdout.write(`results: ${file}\n`);
  return 0;
}

void runMain(main);
