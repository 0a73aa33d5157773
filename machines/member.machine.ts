import { assertEvent, assign, setup } from 'xstate';

export type MemberState = 'active' | 'invite_pending' | 'invite_rejected';

export interface MemberContext {
  appId: string;
  id: string;
  group_id: string;
  user_id: string;
  roles: string[];
  /** The state the member was created in (a platform may create a member in any state). */
  created_in: MemberState;
  invited_by?: string;
  added_by?: string;
  /** The invite that created this member, while it is the way in. */
  invite_id?: string;
  created_at: string;
  updated_at: string;
}

export interface MemberInput {
  appId: string;
  id: string;
  groupId: string;
  userId: string;
  roles: string[];
  state: MemberState;
  invitedBy?: string;
  addedBy?: string;
  inviteId?: string;
  at: number;
}

export type MemberEvent =
  | { type: 'member.accept'; at: number }
  | { type: 'member.reject'; at: number }
  | { type: 'member.setRoles'; roles: string[]; at: number };

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * A user's place in a group. An invited member is `invite_pending` and becomes `active` only by
 * accepting (`member.accept`), or `invite_rejected` by rejecting; a rejected member is final.
 */
export const memberMachine = setup({
  types: {} as { context: MemberContext; events: MemberEvent; input: MemberInput },
  guards: {
    createdActive: ({ context }) => context.created_in === 'active',
    createdRejected: ({ context }) => context.created_in === 'invite_rejected',
  },
  actions: {
    stampUpdated: assign({ updated_at: ({ event }) => iso(event.at) }),
    setRoles: assign({
      roles: ({ event }) => {
        assertEvent(event, 'member.setRoles');
        return event.roles;
      },
    }),
  },
}).createMachine({
  id: 'member',
  context: ({ input }) => ({
    appId: input.appId,
    id: input.id,
    group_id: input.groupId,
    user_id: input.userId,
    roles: input.roles,
    created_in: input.state,
    ...(input.invitedBy === undefined ? {} : { invited_by: input.invitedBy }),
    ...(input.addedBy === undefined ? {} : { added_by: input.addedBy }),
    ...(input.inviteId === undefined ? {} : { invite_id: input.inviteId }),
    created_at: iso(input.at),
    updated_at: iso(input.at),
  }),
  initial: 'created',
  states: {
    created: {
      always: [
        { guard: 'createdActive', target: 'active' },
        { guard: 'createdRejected', target: 'invite_rejected' },
        { target: 'invite_pending' },
      ],
    },
    invite_pending: {
      on: {
        'member.accept': { target: 'active', actions: 'stampUpdated' },
        'member.reject': { target: 'invite_rejected', actions: 'stampUpdated' },
        'member.setRoles': { actions: ['setRoles', 'stampUpdated'] },
      },
    },
    active: {
      on: {
        'member.setRoles': { actions: ['setRoles', 'stampUpdated'] },
      },
    },
    invite_rejected: { type: 'final' },
  },
});

export const MEMBER_MACHINE_VERSION = 1;
