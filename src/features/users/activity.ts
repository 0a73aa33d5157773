import type { Logger } from 'pino';
import type { Clock } from '../../lib/clock.js';
import type { RequestContext } from '../../http/context.js';
import type { Step } from '../../http/route.js';
import type { ActorRuntime } from '../../runtime/runtime.js';
import { USER_KIND, userKey, userLock, type UserDirectory } from './directory.js';
import { sessionMarksOf, sessionRevoked, type SessionOf } from '../../auth/revocation.js';
import type { UserContext } from '../../../machines/user.machine.js';

/** ADDENDUM §3: `meta.last_active` moves at most once a minute per user. */
export const LAST_ACTIVE_EVERY_MS = 60_000;
/** Remembered stamps; past this many the memory starts over (it only saves snapshot reads). */
const REMEMBERED_LIMIT = 100_000;

interface Stamp {
  at: number;
  createdAt: number;
}

/**
 * Stamps `meta.last_active` on authenticated `/me` calls. A call whose user was stamped less than a
 * minute ago costs one map lookup; only a stale stamp reads the snapshot and, if still stale, sends
 * `user.touch` (awaited, so the answer already shows it).
 */
export class ActivityStamps {
  /**
   * appId → userId → the last stamp known to be committed (ms), with the creation time of the user it
   * is of: a user deleted and made again under its ID has no stamp yet. Nested, so no key is built per call.
   */
  private readonly stamped = new Map<string, Map<string, Stamp>>();
  private rememberedCount = 0;

  constructor(
    private readonly users: UserDirectory,
    private readonly runtime: ActorRuntime,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  note(ctx: RequestContext): void | Promise<void> {
    const caller = ctx.caller;
    if (caller?.kind !== 'user') return;
    const { appId, userId } = caller;
    const now = this.clock.now();
    const known = this.stamped.get(appId)?.get(userId);
    if (known?.createdAt === caller.userCreatedAt && now - known.at < LAST_ACTIVE_EVERY_MS) return;
    const lastActive = Date.parse(this.users.get(appId, userId)?.context.meta.last_active ?? '');
    if (now - lastActive < LAST_ACTIVE_EVERY_MS) return this.remember(appId, userId, { at: lastActive, createdAt: caller.userCreatedAt });
    return this.touch(appId, caller).then(() => {
      // While the stamp waited for the user's lock, the user may have been deleted (and made again under
      // its ID), disabled or signed out: the body read again below must still be this caller's.
      this.users.checkCaller(appId, caller);
      caller.view = undefined;
      this.remember(appId, userId, { at: now, createdAt: caller.userCreatedAt });
    });
  }

  private async touch(appId: string, caller: SessionOf): Promise<void> {
    const { userId } = caller;
    try {
      await this.runtime.run([userLock(appId, userId)], (turn) => {
        // Between the step's check and this turn the user may have been disabled, signed out or removed
        // (and made again): a stamp is the caller's own user's.
        const user = turn.get<UserContext>(USER_KIND, userKey(appId, userId));
        if (user?.state !== 'enabled' || sessionRevoked(sessionMarksOf(user.context), caller.sessionId, caller.userCreatedAt)) return;
        this.users.change(turn, appId, userId, { type: 'user.touch', at: turn.now });
      });
    } catch (error) {
      // A missed stamp must not fail the call it rides on.
      this.logger.warn({ err: error, appId, userId }, 'last_active stamp failed');
    }
  }

  private remember(appId: string, userId: string, stamp: Stamp): void {
    if (this.rememberedCount >= REMEMBERED_LIMIT) {
      this.stamped.clear();
      this.rememberedCount = 0;
    }
    let users = this.stamped.get(appId);
    if (!users) this.stamped.set(appId, (users = new Map()));
    if (!users.has(userId)) this.rememberedCount++;
    users.set(userId, stamp);
  }
}

/** `requireUser` followed by the activity stamp, for every `/me` route. */
export function withActivity(requireUser: Step, stamps: ActivityStamps): Step {
  return (ctx) => {
    const pending = requireUser(ctx);
    if (pending instanceof Promise) return pending.then(() => stamps.note(ctx));
    return stamps.note(ctx);
  };
}
