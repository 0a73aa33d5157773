import type { ApplicationStore, NewCredential, Application } from './store.js';

/** First start on an empty data dir: the `default` app and one credential, shown this once. */
export async function ensureDefaultApplication(
  apps: ApplicationStore,
): Promise<{ app: Application; credential: NewCredential } | undefined> {
  if (!apps.isEmpty()) return undefined;
  return apps.createFirst('default');
}
