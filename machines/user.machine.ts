import { assign, setup } from 'xstate';

export type AuthLevel = 'unverified' | 'verified' | 'guest' | 'instant';
export type SignInMethod = 'magic_link' | 'invite_link' | 'refresh_token';
export type Attributes = Record<string, string[]>;
export type ProfileData = Record<string, unknown>;

export interface VerifiedData {
  email?: string;
  phone_number?: string;
}

export interface UserMeta {
  created: string;
  modified: string;
  first_sign_in?: string;
  last_sign_in?: string;
  last_active?: string;
  last_passkey_registration_prompt?: string;
  first_sign_in_method?: SignInMethod;
  last_sign_in_method?: SignInMethod;
}

/** A revoked session, kept until its last access token has expired anyway. */
export interface RevokedSession {
  sid: string;
  until: number;
}

export interface UserContext {
  appId: string;
  id: string;
  data: ProfileData;
  verified_data: VerifiedData;
  attributes: Attributes;
  auth_level: AuthLevel;
  meta: UserMeta;
  /** Sessions started at or before this instant (ms) are refused: "sign out everywhere". */
  revokedBefore: number;
  revokedSessions: RevokedSession[];
}

export interface UserInput {
  appId: string;
  id: string;
  data: ProfileData;
  attributes: Attributes;
  at: number;
  auth_level?: AuthLevel;
}

export type UserEvent =
  /** `verified_data` is what the new `data` still proves (the directory works it out). */
  | { type: 'user.update'; data: ProfileData; attributes: Attributes; verified_data: VerifiedData; at: number }
  | { type: 'user.disable'; at: number }
  | { type: 'user.enable'; at: number }
  | { type: 'user.signIn'; method: SignInMethod; verified?: VerifiedData; auth_level?: AuthLevel; at: number }
  | { type: 'user.touch'; at: number }
  | { type: 'user.promptPasskey'; prompted: string; at: number }
  | { type: 'user.revokeAll'; at: number }
  | { type: 'user.revokeSession'; sid: string; until: number; at: number };

const iso = (ms: number) => new Date(ms).toISOString();

const provesAny = (verified: VerifiedData) => verified.email !== undefined || verified.phone_number !== undefined;

const withoutExpired = (sessions: RevokedSession[], at: number) => sessions.filter((s) => s.until > at);

/** `meta` with `modified` stamped at `at`. */
const modifiedAt = (meta: UserMeta, at: number): UserMeta => ({ ...meta, modified: iso(at) });

/**
 * A user of one application: `enabled` or `disabled`. Every change of a profile, its sign-in
 * stamps and its revocation marks goes through here; time arrives on the events.
 */
export const userMachine = setup({
  types: {} as { context: UserContext; events: UserEvent; input: UserInput },
  actions: {
    stampModified: assign({ meta: ({ context, event }) => modifiedAt(context.meta, event.at) }),
  },
}).createMachine({
  id: 'user',
  context: ({ input }) => ({
    appId: input.appId,
    id: input.id,
    data: input.data,
    verified_data: {},
    attributes: input.attributes,
    auth_level: input.auth_level ?? 'unverified',
    meta: { created: iso(input.at), modified: iso(input.at) },
    revokedBefore: 0,
    revokedSessions: [],
  }),
  initial: 'enabled',
  on: {
    'user.update': {
      // One assignment, not two: this is the event of every profile write.
      actions: assign(({ context, event }) => ({
        data: event.data,
        attributes: event.attributes,
        verified_data: event.verified_data,
        // `verified` says the user proved an address it holds: not once it holds none it proved.
        auth_level: context.auth_level === 'verified' && !provesAny(event.verified_data) ? 'unverified' : context.auth_level,
        meta: modifiedAt(context.meta, event.at),
      })),
    },
    'user.revokeAll': {
      actions: assign({
        revokedBefore: ({ event }) => event.at,
        revokedSessions: ({ context, event }) => withoutExpired(context.revokedSessions, event.at),
      }),
    },
    'user.revokeSession': {
      actions: assign({
        revokedSessions: ({ context, event }) => [
          ...withoutExpired(context.revokedSessions, event.at).filter((s) => s.sid !== event.sid),
          { sid: event.sid, until: event.until },
        ],
      }),
    },
    'user.promptPasskey': {
      actions: assign({
        meta: ({ context, event }) => ({ ...context.meta, last_passkey_registration_prompt: event.prompted }),
      }),
    },
  },
  states: {
    enabled: {
      on: {
        'user.disable': { target: 'disabled', actions: 'stampModified' },
        'user.signIn': {
          actions: assign(({ context, event }) => {
            const verified_data = { ...context.verified_data, ...event.verified };
            const auth_level = event.auth_level ?? (event.verified ? 'verified' : context.auth_level);
            // Sign-in stamps are no modification; an address it proves for the first time, or a level it
            // raises, changes the profile as a write would, and an app syncing by `meta.modified` must see it.
            const changes = auth_level !== context.auth_level
              || verified_data.email !== context.verified_data.email
              || verified_data.phone_number !== context.verified_data.phone_number;
            return {
              verified_data,
              auth_level,
              meta: {
                ...(changes ? modifiedAt(context.meta, event.at) : context.meta),
                first_sign_in: context.meta.first_sign_in ?? iso(event.at),
                first_sign_in_method: context.meta.first_sign_in_method ?? event.method,
                last_sign_in: iso(event.at),
                last_sign_in_method: event.method,
                last_active: iso(event.at),
              },
            };
          }),
        },
        'user.touch': {
          actions: assign({ meta: ({ context, event }) => ({ ...context.meta, last_active: iso(event.at) }) }),
        },
      },
    },
    disabled: {
      on: {
        'user.enable': { target: 'enabled', actions: 'stampModified' },
      },
    },
  },
});

export const USER_MACHINE_VERSION = 1;

/**
 * The persisted snapshot of a user in `state` with `context`, as `getPersistedSnapshot` gives it:
 * the machine has no history states, spawns no children and never stops, so that is all one holds.
 * Users are stored as their profile records, from which the runtime restores them through this.
 */
export const persistedUser = (state: string, context: UserContext) => ({
  status: 'active',
  value: state,
  historyValue: {},
  context,
  children: {},
});
