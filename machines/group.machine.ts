import { assign, setup } from 'xstate';

export type AdmissionPolicy = 'invite_only' | 'open';

/** Running totals of a group's members and invites, moved in the same turn as the change they count. */
export interface GroupTally {
  /** Members in state `active`: the group's `member_count`. */
  active: number;
  /** Active members holding the `owner` role: the last one may not go. */
  owners: number;
  /** Member records in any state. */
  members: number;
  /** Invites in any state. */
  invites: number;
}

export interface GroupContext {
  appId: string;
  id: string;
  name: string;
  admission_policy: AdmissionPolicy;
  meta: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  created_by: string;
  updated_by: string;
  tally: GroupTally;
}

export interface GroupInput {
  appId: string;
  id: string;
  name: string;
  admission_policy: AdmissionPolicy;
  meta: Record<string, unknown>;
  by: string;
  at: number;
}

export type GroupEvent =
  | { type: 'group.update'; name: string; admission_policy: AdmissionPolicy; meta: Record<string, unknown>; by: string; at: number }
  | { type: 'group.tally'; delta: Partial<GroupTally> };

const iso = (ms: number) => new Date(ms).toISOString();

const TALLY_KEYS = ['active', 'owners', 'members', 'invites'] as const;

const applyDelta = (tally: GroupTally, delta: Partial<GroupTally>): GroupTally => {
  const next = { ...tally };
  for (const key of TALLY_KEYS) next[key] += delta[key] ?? 0;
  return next;
};

/**
 * A group of one application. It has one state, `active` (deleting a group removes its actor); its
 * events rename it and keep its member and invite totals, which can never go below zero.
 */
export const groupMachine = setup({
  types: {} as { context: GroupContext; events: GroupEvent; input: GroupInput },
  guards: {
    keepsTallyNonNegative: ({ context, event }) =>
      event.type === 'group.tally' && TALLY_KEYS.every((key) => applyDelta(context.tally, event.delta)[key] >= 0),
  },
}).createMachine({
  id: 'group',
  context: ({ input }) => ({
    appId: input.appId,
    id: input.id,
    name: input.name,
    admission_policy: input.admission_policy,
    meta: input.meta,
    created_at: iso(input.at),
    updated_at: iso(input.at),
    created_by: input.by,
    updated_by: input.by,
    tally: { active: 0, owners: 0, members: 0, invites: 0 },
  }),
  initial: 'active',
  states: {
    active: {
      on: {
        'group.update': {
          actions: assign(({ event }) => ({
            name: event.name,
            admission_policy: event.admission_policy,
            meta: event.meta,
            updated_at: iso(event.at),
            updated_by: event.by,
          })),
        },
        'group.tally': {
          guard: 'keepsTallyNonNegative',
          actions: assign({ tally: ({ context, event }) => applyDelta(context.tally, event.delta) }),
        },
      },
    },
  },
});

export const GROUP_MACHINE_VERSION = 1;
