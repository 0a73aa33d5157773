import type { Logger } from 'pino';
import { createLogger } from './lib/logger.js';
import type { Config } from './config.js';
import { systemClock, type Clock } from './lib/clock.js';
import { openStore } from './storage/store.js';
import { migrate, refuseNewerFormat, requireCurrentFormat } from './storage/migrations.js';
import { formatSteps } from './format-steps.js';
import { ActorRuntime } from './runtime/runtime.js';
import { loadPepper } from './auth/pepper.js';
import { ApplicationStore } from './features/applications/store.js';
import { createMetrics } from './http/metrics.js';
import { machines } from '../machines/index.js';
import type { MachineRegistry } from './runtime/machines.js';
import { ProfileViews } from './features/users/profile-views.js';
import { USER_KIND, UserDirectory } from './features/users/directory.js';
import { createGroupsCore } from './features/groups/core.js';
import { registerGroupLinkPurposes } from './features/groups/link-purposes.js';
import { ActivityStamps, withActivity } from './features/users/activity.js';
import { SigningKeys } from './auth/signing-keys.js';
import { AccessTokens } from './auth/access-tokens.js';
import { requireUser } from './auth/bearer-auth.js';
import { requireAppCredentials } from './auth/platform-auth.js';
import { RateLimiter } from './http/rate-limit.js';
import { thenLimit, limitByIp } from './auth/rate-limited-steps.js';
import { SessionStore } from './features/sessions/session-store.js';
import { MagicLinks } from './features/magic-links/link-store.js';
import { LinkPurposes } from './features/magic-links/purposes.js';
import { RegisteredRedirects } from './features/oidc-clients/registered-redirects.js';
import { RegisteredOrigins } from './features/oidc-clients/registered-origins.js';
import { imageDecodeGate } from './features/users/profile-files.js';
import type { Deps } from './deps.js';

export interface ServiceOptions {
  clock?: Clock;
  logger?: Logger;
  /** The actor kinds; the service's own by default (tests register their own machines). */
  machines?: MachineRegistry;
  /**
   * Changes nothing in the data dir (`verify`): one a server start would change first (migrate it,
   * make its pepper) is refused with `DataDirNotReady`, and no signing key is made.
   */
  readOnly?: boolean;
}

/** Opens the data dir and builds every shared service: what main, the CLI and tests start from. */
export async function openServices(config: Config, options: ServiceOptions = {}): Promise<Deps> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger(config.logLevel);
  const readOnly = options.readOnly ?? false;
  const store = openStore(config.dataDir, { readOnly });
  // Whatever step fails once the store is open, the timers started by then (the runtime's sweep, the
  // key watch) are stopped and the store closed before the error goes on.
  const stopTimers: Array<() => void> = [];
  try {
    if (readOnly) requireCurrentFormat(store);
    else refuseNewerFormat(store);
    const pepper = await loadPepper(store, { create: !readOnly });
    const apps = new ApplicationStore(store, pepper, clock);
    const profiles = new ProfileViews(store, apps, config);
    const runtime = new ActorRuntime({
      store,
      machines: options.machines ?? machines,
      clock,
      logger,
      maxActors: config.maxActors,
      maxActorBytes: config.maxActorBytes,
      idleMs: config.actorIdleMs,
      snapshotStores: { [USER_KIND]: profiles.snapshotStore() },
    });
    stopTimers.push(() => runtime.stop());
    const users = new UserDirectory(store, runtime, profiles, apps);
    if (!readOnly) await migrate(store, logger, formatSteps(runtime, profiles, apps, users));
    const signingKeys = await SigningKeys.open(store, clock, { readOnly });
    const accessTokens = new AccessTokens(config, signingKeys, clock);
    if (!readOnly) {
      accessTokens.watchKeys((error) => logger.warn({ err: error }, 'reading the signing keys failed'));
      stopTimers.push(() => accessTokens.stop());
    }
    const sessions = new SessionStore(store, pepper, config.accessTokenTtlSeconds * 1000);
    const redirects = new RegisteredRedirects(store);
    const magicLinks = new MagicLinks(store, pepper, config.publicUrl, redirects, sessions, new LinkPurposes());
    const groups = createGroupsCore({ store, runtime, users, profiles, magicLinks, config });
    registerGroupLinkPurposes(magicLinks.purposes, groups);
    const metrics = createMetrics();
    metrics.gauge('actors_resident', 'Actors currently activated in memory', () => runtime.residentCount);
    metrics.gauge('actors_resident_bytes', 'Stored bytes of the actors activated in memory (user profiles; other kinds count 0)', () => runtime.residentBytes);
    metrics.gauge('lmdb_map_size_bytes', 'Bytes used by the LMDB data file', () => {
      const stat = store.root.getStats() as { pageSize: number; lastPageNumber: number };
      return stat.pageSize * (stat.lastPageNumber + 1);
    });
    return {
      config,
      clock,
      logger,
      store,
      runtime,
      apps,
      pepper,
      metrics,
      users,
      profiles,
      groups,
      signingKeys,
      accessTokens,
      sessions,
      magicLinks,
      redirects,
      clientOrigins: new RegisteredOrigins(store),
      imageDecodes: imageDecodeGate(),
      // Activity is stamped only on calls the rate limit let through.
      requireUser: withActivity(
        thenLimit(requireUser(accessTokens, profiles, clock), new RateLimiter(config.rateLimits.userWrites, clock), (ctx) =>
          ctx.method !== 'GET' && ctx.method !== 'HEAD' && ctx.caller?.kind === 'user' ? `${ctx.caller.appId}:${ctx.caller.userId}` : undefined,
        ),
        new ActivityStamps(users, runtime, clock, logger),
      ),
      requireApp: thenLimit(requireAppCredentials(config, apps), new RateLimiter(config.rateLimits.app, clock), (ctx) =>
        ctx.caller?.kind === 'app' ? ctx.caller.key : undefined,
      ),
      limitHub: limitByIp(new RateLimiter(config.rateLimits.hubIp, clock), config.trustedProxies),
    };
  } catch (error) {
    for (const stop of stopTimers) stop();
    await store.close();
    throw error;
  }
}

export async function closeServices(deps: Deps): Promise<void> {
  deps.accessTokens.stop();
  deps.runtime.stop();
  await deps.store.close();
}
