import { appKeyChallenge, appKeyRefused, unauthorized } from '../lib/errors.js';
import type { Step } from '../http/route.js';
import { assertSameApp, type ApplicationStore } from '../features/applications/store.js';
import type { Config } from '../config.js';

/**
 * The platform step: `x-<brand>-app-key` and `x-<brand>-app-secret` name a live credential (401
 * otherwise) of the application in the path (403 otherwise).
 */
export function requireAppCredentials(config: Config, apps: ApplicationStore): Step {
  const { appKeyHeader, appSecretHeader } = config.names;
  const challenge = appKeyChallenge(appKeyHeader, appSecretHeader);
  return (ctx) => {
    const key = ctx.header(appKeyHeader);
    const secret = ctx.header(appSecretHeader);
    if (!key || !secret) throw appKeyRefused(`Headers ${appKeyHeader} and ${appSecretHeader} are required`, challenge);
    const appId = apps.authenticate(key, secret);
    if (!appId) throw appKeyRefused('Invalid app key or secret', challenge);
    if (ctx.params.app !== undefined) assertSameApp(appId, ctx.params.app);
    ctx.caller = { kind: 'app', appId, key };
  };
}

/** The caller's application, for handlers behind `requireAppCredentials`. */
export function callerAppId(caller: { kind: string; appId?: string } | undefined): string {
  if (!caller || caller.kind !== 'app' || !caller.appId) throw unauthorized();
  return caller.appId;
}
