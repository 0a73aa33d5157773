import { assign, setup } from 'xstate';

export interface InviteContext {
  appId: string;
  id: string;
  group_id: string;
  roles: string[];
  /** The invite made the group's first member, so `owner` stays among its roles on every update. */
  first: boolean;
  email?: string;
  phone?: string;
  user_id?: string;
  user_lookup_value?: string;
  redirect_url?: string;
  app_variant_id?: string;
  ensured_user_id: string;
  /** The `invite_pending` member this invite created. */
  member_id: string;
  created_at: string;
  created_by: string;
  accepted_by?: string;
}

export interface InviteInput {
  appId: string;
  id: string;
  groupId: string;
  roles: string[];
  first: boolean;
  target: { email: string } | { phone: string } | { user_id: string };
  redirectUrl?: string;
  appVariantId?: string;
  ensuredUserId: string;
  memberId: string;
  by: string;
  at: number;
}

export type InviteEvent =
  | { type: 'invite.update'; roles: string[]; redirect_url?: string; app_variant_id?: string }
  | { type: 'invite.accept'; by: string; at: number }
  | { type: 'invite.reject'; at: number };

const iso = (ms: number) => new Date(ms).toISOString();

/** An invitation to join a group: `pending` until its user accepts or rejects it; both are final. */
export const inviteMachine = setup({
  types: {} as { context: InviteContext; events: InviteEvent; input: InviteInput },
}).createMachine({
  id: 'invite',
  context: ({ input }) => ({
    appId: input.appId,
    id: input.id,
    group_id: input.groupId,
    roles: input.roles,
    first: input.first,
    ...input.target,
    ...('user_id' in input.target ? {} : { user_lookup_value: Object.values(input.target)[0] }),
    ...(input.redirectUrl === undefined ? {} : { redirect_url: input.redirectUrl }),
    ...(input.appVariantId === undefined ? {} : { app_variant_id: input.appVariantId }),
    ensured_user_id: input.ensuredUserId,
    member_id: input.memberId,
    created_at: iso(input.at),
    created_by: input.by,
  }),
  initial: 'pending',
  states: {
    pending: {
      on: {
        'invite.update': {
          // A PUT replaces: an omitted redirect_url or app_variant_id is cleared.
          actions: assign(({ event }) => ({
            roles: event.roles,
            redirect_url: event.redirect_url,
            app_variant_id: event.app_variant_id,
          })),
        },
        'invite.accept': { target: 'accepted', actions: assign({ accepted_by: ({ event }) => event.by }) },
        'invite.reject': { target: 'rejected' },
      },
    },
    accepted: { type: 'final' },
    rejected: { type: 'final' },
  },
});

export const INVITE_MACHINE_VERSION = 1;
