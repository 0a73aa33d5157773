import type { ChildServer } from '../helpers/child.js';
import type { TestApp } from '../helpers/server.js';
import { lostAmong, untilKilled } from './acks.js';
import { ADMIN_TOKEN, call, platformHeaders } from './api-calls.js';
import { newIdKinds } from './new-id-kinds.js';
import { removalKinds } from './removal-kinds.js';

export { ADMIN_TOKEN, prepareApp } from './api-calls.js';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

/** What a write kind may rely on: the server it writes to and the app its first start made. */
export interface CrashContext {
  server: ChildServer;
  defaultApp: TestApp;
}

/**
 * One kind of acknowledged write for the crash test. A feature adds its own kind (a profile upsert,
 * a group create…) by implementing this and listing it in `writeKinds`.
 */
export interface WriteKind<Ack = unknown> {
  name: string;
  /** One write; resolves with what to check later if the server acknowledged it (2xx), else undefined. */
  write(context: CrashContext, n: number): Promise<Ack | undefined>;
  /** After the restart: the acknowledged writes that do not read back (empty when all survived). */
  missing(context: CrashContext, acks: Ack[]): Promise<Ack[]>;
}

async function adminJson(server: ChildServer, method: string, path: string, body?: unknown) {
  const res = await fetch(server.url + path, { method, headers: admin, body: body === undefined ? undefined : JSON.stringify(body) });
  return { ok: res.ok, status: res.status, body: res.headers.get('content-type')?.includes('json') ? await res.json() : undefined };
}

const applicationCreate: WriteKind<{ id: string; name: string }> = {
  name: 'application create (admin API)',
  async write({ server }, n) {
    const res = await adminJson(server, 'POST', '/admin/applications', { name: `crash app ${n}` });
    return res.ok ? { id: res.body.id, name: res.body.name } : undefined;
  },
  async missing({ server }, acks) {
    const { body } = await adminJson(server, 'GET', '/admin/applications');
    const stored = new Map<string, string>(body.results.map((a: { id: string; name: string }) => [a.id, a.name]));
    return acks.filter((ack) => stored.get(ack.id) !== ack.name);
  },
};

const credentialCreate: WriteKind<{ key: string; masked: string }> = {
  name: 'credential create (admin API)',
  async write({ server, defaultApp }, _n) {
    const res = await adminJson(server, 'POST', `/admin/applications/${defaultApp.id}/credentials`);
    return res.ok ? { key: res.body.key, masked: `${res.body.secret.slice(0, 6)}…${res.body.secret.slice(-4)}` } : undefined;
  },
  async missing({ server, defaultApp }, acks) {
    const { body } = await adminJson(server, 'GET', `/admin/applications/${defaultApp.id}/credentials`);
    const stored = new Map<string, string>(body.results.map((c: { key: string; secret: string }) => [c.key, c.secret]));
    return acks.filter((ack) => stored.get(ack.key) !== ack.masked);
  },
};

const profileUpsert: WriteKind<{ userId: string; firstName: string }> = {
  name: 'profile upsert (platform API)',
  async write(context, n) {
    const userId = `crash-user-${n}`;
    const firstName = `Crash ${n}`;
    const path = `/applications/${context.defaultApp.id}/users/${userId}/data`;
    const res = await fetch(context.server.url + path, {
      method: 'PUT',
      headers: platformHeaders(context),
      body: JSON.stringify({ data: { first_name: firstName } }),
    });
    await res.arrayBuffer();
    return res.ok ? { userId, firstName } : undefined;
  },
  async missing(context, acks) {
    return lostAmong(acks, async (ack) => {
      const path = `/applications/${context.defaultApp.id}/users/${ack.userId}/data`;
      const res = await fetch(context.server.url + path, { headers: platformHeaders(context) });
      const profile = res.ok ? await res.json() : undefined;
      return profile?.data?.first_name !== ack.firstName;
    });
  },
};

/** Signs a new user in by magic link, then signs it out everywhere: acknowledged = its token is dead for good. */
const signOutEverywhere: WriteKind<{ userId: string; token: string }> = {
  name: 'sign-out everywhere (platform API)',
  async write(context, n) {
    const link = await call(context, 'POST', '/hub/auth/magic', {
      body: { verification_type: 'email', data: { email: `crash-signout-${n}@example.com` } },
    });
    if (link.status !== 200) return undefined;
    const redeemed = await call(context, 'GET', new URL(link.body.link).pathname);
    if (redeemed.status !== 200) return undefined;
    const userId = redeemed.body.app_user_id;
    const out = await call(context, 'POST', `/applications/${context.defaultApp.id}/users/${userId}/signout`, {
      body: { sign_out_all: true },
    });
    return out.status === 204 ? { userId, token: redeemed.body.access_token } : undefined;
  },
  async missing(context, acks) {
    return lostAmong(acks, async (ack) => {
      const me = await call(context, 'GET', `/me/applications/${context.defaultApp.id}/data`, { token: ack.token });
      return me.status !== 401 || me.body?.code !== 'E_TOKEN_REVOKED';
    });
  },
};

interface EndedAck {
  access: string;
  /** The session's live refresh token when it was ended. */
  refresh: string;
}

/**
 * Signs a new user in by magic link and refreshes, then ends that one session: by its own `/me`
 * sign-out (even n) or by reusing the spent first refresh token (odd n: refused, and the session ends).
 * Acknowledged = the 204, or the reuse's 400: the session's access and refresh tokens are dead for good.
 */
const sessionEnded: WriteKind<EndedAck> = {
  name: 'one session ended (/me sign-out, or refresh token reused)',
  async write(context, n) {
    const made = await call(context, 'POST', '/hub/auth/magic', {
      body: { verification_type: 'email', data: { email: `crash-ended-${n}@example.com` } },
    });
    if (made.status !== 200) return undefined;
    const signedIn = await call(context, 'GET', new URL(made.body.link).pathname);
    if (signedIn.status !== 200) return undefined;
    const refreshed = await call(context, 'POST', '/hub/auth/token', { body: { refresh_token: signedIn.body.refresh_token } });
    if (refreshed.status !== 200) return undefined;
    const ack = { access: refreshed.body.access_token, refresh: refreshed.body.refresh_token };
    if (n % 2 === 0) {
      const out = await call(context, 'POST', `/me/applications/${context.defaultApp.id}/signout`, { token: ack.access, body: { sign_out_all: false } });
      return out.status === 204 ? ack : undefined;
    }
    const reused = await call(context, 'POST', '/hub/auth/token', { body: { refresh_token: signedIn.body.refresh_token } });
    return reused.body?.code === 'E_INVALID_REFRESH_TOKEN' ? ack : undefined;
  },
  async missing(context, acks) {
    return lostAmong(acks, async (ack) => {
      const me = await call(context, 'GET', `/me/applications/${context.defaultApp.id}/data`, { token: ack.access });
      const refreshed = await call(context, 'POST', '/hub/auth/token', { body: { refresh_token: ack.refresh } });
      return me.body?.code !== 'E_TOKEN_REVOKED' || refreshed.body?.code !== 'E_INVALID_REFRESH_TOKEN';
    });
  },
};

interface SpentAck {
  link: string;
  /** The refresh token the sign-in issued, once a refresh has rotated it away. */
  rotated?: string;
}

/**
 * Signs a new user in by magic link, then refreshes: acknowledged = the link is spent, and then the
 * first refresh token too. Checked with what is refused for good (a spent link, a reused token), so
 * checking again after later cycles reads the same.
 */
const spentOnce: WriteKind<SpentAck> = {
  name: 'magic link redeemed, refresh token rotated',
  async write(context, n) {
    const made = await call(context, 'POST', '/hub/auth/magic', {
      body: { verification_type: 'email', data: { email: `crash-spent-${n}@example.com` } },
    });
    if (made.status !== 200) return undefined;
    const link = new URL(made.body.link).pathname;
    const redeemed = await call(context, 'GET', link);
    if (redeemed.status !== 200) return undefined;
    const ack: SpentAck = { link };
    await untilKilled(async () => {
      const refreshed = await call(context, 'POST', '/hub/auth/token', { body: { refresh_token: redeemed.body.refresh_token } });
      if (refreshed.status === 200) ack.rotated = redeemed.body.refresh_token;
    });
    return ack;
  },
  async missing(context, acks) {
    return lostAmong(acks, async (ack) => {
      const again = await call(context, 'GET', ack.link);
      const reused = ack.rotated ? await call(context, 'POST', '/hub/auth/token', { body: { refresh_token: ack.rotated } }) : undefined;
      const spent = again.body?.code === 'E_LINK_EXPIRED' && (!reused || reused.body?.code === 'E_INVALID_REFRESH_TOKEN');
      return !spent;
    });
  },
};

interface GroupAck {
  groupId: string;
  /** 1: group created, 2: a member added, 3: an invite accepted through its link. */
  stage: number;
  inviteId?: string;
}

/** A group's life in acknowledged steps; each step reached must still show after the restart. */
const groupStory: WriteKind<GroupAck> = {
  name: 'group create, member add, invite accepted by link',
  async write(context, n) {
    const base = `/applications/${context.defaultApp.id}/groups`;
    const group = await call(context, 'POST', base, { body: { name: `crash group ${n}` } });
    if (group.status !== 200) return undefined;
    const ack: GroupAck = { groupId: group.body.id, stage: 1 };
    await untilKilled(async () => {
      const member = await call(context, 'POST', `${base}/${ack.groupId}/members`, {
        body: { email: `crash-owner-${n}@example.com`, roles: ['admin'] },
      });
      if (member.status !== 200) return;
      ack.stage = 2;
      const invite = await call(context, 'POST', `${base}/${ack.groupId}/invites`, {
        body: { email: `crash-invitee-${n}@example.com`, roles: ['member'] },
      });
      if (invite.status !== 200) return;
      const redeemed = await call(context, 'GET', new URL(invite.body.link).pathname);
      if (redeemed.status === 200) Object.assign(ack, { stage: 3, inviteId: invite.body.invitation.id });
    });
    return ack;
  },
  async missing(context, acks) {
    const base = `/applications/${context.defaultApp.id}/groups`;
    return lostAmong(acks, async (ack) => {
      const group = await call(context, 'GET', `${base}/${ack.groupId}`);
      const count = group.body?.member_count;
      const invite = ack.inviteId ? await call(context, 'GET', `${base}/${ack.groupId}/invites/${ack.inviteId}`) : undefined;
      const intact =
        group.status === 200 &&
        (ack.stage < 2 || count >= 1) &&
        (ack.stage < 3 || (count === 2 && invite?.body?.state === 'accepted'));
      return !intact;
    });
  },
};

export const writeKinds: WriteKind<any>[] = [
  applicationCreate,
  credentialCreate,
  profileUpsert,
  signOutEverywhere,
  sessionEnded,
  spentOnce,
  groupStory,
  ...removalKinds,
  ...newIdKinds,
];
