import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Clock } from './lib/clock.js';
import type { Store } from './storage/store.js';
import type { ActorRuntime } from './runtime/runtime.js';
import type { ApplicationStore } from './features/applications/store.js';
import type { Metrics } from './http/metrics.js';
import type { UserDirectory } from './features/users/directory.js';
import type { ProfileViews } from './features/users/profile-views.js';
import type { SigningKeys } from './auth/signing-keys.js';
import type { AccessTokens } from './auth/access-tokens.js';
import type { Step } from './http/route.js';
import type { GroupsCore } from './features/groups/core.js';
import type { SessionStore } from './features/sessions/session-store.js';
import type { MagicLinks } from './features/magic-links/link-store.js';
import type { RegisteredRedirects } from './features/oidc-clients/registered-redirects.js';
import type { RegisteredOrigins } from './features/oidc-clients/registered-origins.js';
import type { Gate } from './lib/gate.js';

/** Everything a feature may use; passed in, never imported as a global. */
export interface Deps {
  config: Config;
  clock: Clock;
  logger: Logger;
  store: Store;
  runtime: ActorRuntime;
  apps: ApplicationStore;
  pepper: Buffer;
  metrics: Metrics;
  users: UserDirectory;
  profiles: ProfileViews;
  /** Groups, members and invites: their tables and the user → groups index. */
  groups: GroupsCore;
  signingKeys: SigningKeys;
  accessTokens: AccessTokens;
  sessions: SessionStore;
  /** Magic links; `magicLinks.purposes` is where features register what their links do on redemption. */
  magicLinks: MagicLinks;
  /** The places an app's links may send the browser to: told of every committed change to its OIDC clients. */
  redirects: RegisteredRedirects;
  /** The `allowed_origins` of every app's OIDC clients, which CORS answers on browser clients' routes: told of every committed change to a client. */
  clientOrigins: RegisteredOrigins;
  /** Every image header read and decode of the process, uploads and previews alike (`imageDecodeGate()`). */
  imageDecodes: Gate;
  /** The `/me` authentication step. */
  requireUser: Step;
  /** The platform authentication step (app key and secret). */
  requireApp: Step;
  /** Per-client-IP limit of every `/hub/*` endpoint. */
  limitHub: Step;
}
