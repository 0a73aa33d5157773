/**
 * How another feature hangs work on a magic link (group invites, `group_to_join`):
 *
 * 1. At start-up (services.ts), register what redeeming its links does:
 *    `magicLinks.purposes.register('invite', { method: 'invite_link', check, locks, redeem })`.
 * 2. In its own turn (holding the user's `userLock`), make the link:
 *    `const { link, ref } = magicLinks.create(turn, { appId, userId, expiresAt, redirectUrl, address,
 *    purpose: { kind: 'invite', groupId, inviteId } })`; keep `ref` to `magicLinks.revoke(turn, ref)` later.
 * 3. `GET /hub/auth/magic/{id}` then spends the link, signs the user in and calls `redeem` in one turn.
 */
import type { Turn } from '../../runtime/runtime.js';
import type { SignInMethod } from '../../../machines/user.machine.js';

/**
 * What a magic link does besides signing its user in. `sign_in` needs nothing more; the other
 * kinds are carried out by the feature that owns them, through a handler it registers.
 */
export type LinkPurpose =
  | { kind: 'sign_in' }
  /** `group_to_join` of `POST /hub/auth/magic`: join an `open` group on redemption. */
  | { kind: 'join_group'; groupId: string }
  /** A group invite's link: accept the invite on redemption. */
  | { kind: 'invite'; groupId: string; inviteId: string };

export type PurposeKind = LinkPurpose['kind'];
export type HandledKind = Exclude<PurposeKind, 'sign_in'>;

/** A link as a handler sees it. */
export interface LinkFacts<K extends PurposeKind = PurposeKind> {
  appId: string;
  userId: string;
  purpose: Extract<LinkPurpose, { kind: K }>;
}

/**
 * The seam between magic links and the feature behind a purpose. The redemption of a link is ONE
 * turn: the link is spent, the user signed in, a session started and `redeem` run, all committed
 * together or not at all (a throw from `redeem` leaves the link unspent).
 */
export interface PurposeHandler<K extends HandledKind> {
  /** Stamped as the user's sign-in method (`invite_link` for invites). */
  method: SignInMethod;
  /** Runs in the turn that creates the link; throws when the purpose cannot be honoured (nothing is stored). */
  check(turn: Turn, link: LinkFacts<K>): void;
  /** Locks the redemption turn must hold besides the user's (the group's, the invite's…). */
  locks(link: LinkFacts<K>): string[];
  /**
   * Runs in the redemption turn, after the sign-in, handed the very object `locks` was handed. A record
   * it makes draws its ID here (`Turn.lockNew`), not in `locks`: drawn before the turn waited for its
   * locks, the ID would sort before records committed meanwhile, and a client paging by ID would skip it.
   */
  redeem(turn: Turn, link: LinkFacts<K>): void;
}

/** The handlers registered at start-up (services.ts), keyed by purpose kind. */
export class LinkPurposes {
  private readonly handlers = new Map<HandledKind, PurposeHandler<any>>();

  register<K extends HandledKind>(kind: K, handler: PurposeHandler<K>): void {
    if (this.handlers.has(kind)) throw new TypeError(`A handler for ${kind} links is already registered`);
    this.handlers.set(kind, handler);
  }

  /** The handler of a purpose; undefined for plain sign-in links. */
  handlerOf(kind: PurposeKind): PurposeHandler<any> | undefined {
    if (kind === 'sign_in') return undefined;
    const handler = this.handlers.get(kind);
    if (!handler) throw new TypeError(`No handler is registered for ${kind} links`);
    return handler;
  }
}
