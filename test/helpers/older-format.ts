import type { Test } from 'tap';
import { startServer } from './server.js';
import { asFormat6Record } from './view-records.js';
import { openStore } from '../../src/storage/store.js';
import { storedFormatVersion } from '../../src/storage/migrations.js';

/**
 * A data dir as data format 6 left it, with one user, `ada`, in its app (its record given by
 * `record`, the format-6 rendering of it by default, and copied under `copies` more user IDs, for an
 * upgrade that takes a while); with the profile it served.
 */
export async function format6DataDir(t: Test, record?: Buffer, copies = 0) {
  const dataDir = t.testdir();
  const server = await startServer(t, { dataDir });
  const { app, deps } = server;
  const path = `/applications/${app.id}/users/ada/data`;
  t.equal((await server.request('PUT', path, { app, body: { data: { first_name: 'Ada' } } })).status, 200);
  const profile = (await server.request('GET', path, { app })).text;
  const { records } = deps.profiles;
  const key = [app.id, 'ada'];
  const staged = record ?? asFormat6Record(records.getBinary(key)!);
  await deps.store.commit(() => {
    records.put(key, staged);
    for (let i = 0; i < copies; i++) records.put([app.id, `copy${i}`], staged);
    deps.store.db('meta').put('format_version', 6);
  });
  await server.close();
  return { dataDir, app, path, profile };
}

/** The data format `dataDir` records. */
export async function formatOf(dataDir: string) {
  const store = openStore(dataDir, { readOnly: true });
  try {
    return storedFormatVersion(store);
  } finally {
    await store.close();
  }
}
