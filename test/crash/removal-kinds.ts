import { lostAmong, untilKilled } from './acks.js';
import { call } from './api-calls.js';
import type { CrashContext, WriteKind } from './write-kinds.js';

/** Signs a new user in by magic link: its ID and access token. */
async function signIn(c: CrashContext, email: string) {
  const link = await call(c, 'POST', '/hub/auth/magic', { body: { verification_type: 'email', data: { email } } });
  if (link.status !== 200) return undefined;
  const r = await call(c, 'GET', new URL(link.body.link).pathname);
  return r.status === 200 ? { userId: r.body.app_user_id as string, token: r.body.access_token as string } : undefined;
}

/** A user with a file, a member of one group and invited to another, then deleted. */
const userDelete: WriteKind<{ userId: string }> = {
  name: 'user delete with its file, membership and invite',
  async write(c, n) {
    const base = `/applications/${c.defaultApp.id}/groups`;
    const userId = `del-user-${n}`;
    const form = new FormData();
    form.set('data', JSON.stringify({ email: `del-${n}@example.com`, first_name: 'X' }));
    form.set('doc', new Blob([`file ${n}`], { type: 'text/plain' }), 'a.txt');
    const up = await call(c, 'PUT', `/applications/${c.defaultApp.id}/users/${userId}/data`, { form });
    if (up.status !== 200) return undefined;
    const member = await call(c, 'POST', base, { body: { name: `del member ${n}` } });
    if (member.status !== 200) return undefined;
    if ((await call(c, 'POST', `${base}/${member.body.id}/members`, { body: { user_id: userId, roles: ['x'] } })).status !== 200) return undefined;
    const invited = await call(c, 'POST', base, { body: { name: `del invite ${n}` } });
    if (invited.status !== 200) return undefined;
    if ((await call(c, 'POST', `${base}/${invited.body.id}/invites`, { body: { user_id: userId, roles: ['y'] } })).status !== 200) return undefined;
    const d = await call(c, 'DELETE', `/applications/${c.defaultApp.id}/users/${userId}/data`);
    return d.status === 204 ? { userId } : undefined;
  },
  async missing(c, acks) {
    return lostAmong(acks, async (a) => {
      const r = await call(c, 'GET', `/applications/${c.defaultApp.id}/users/${a.userId}/data`);
      return r.status !== 404;
    });
  },
};

/** A group with a member and an invite, then deleted: its member's profile no longer lists it. */
const groupDelete: WriteKind<{ groupId: string; userId: string }> = {
  name: 'delete of a group with its member and invite',
  async write(c, n) {
    const base = `/applications/${c.defaultApp.id}/groups`;
    const g = await call(c, 'POST', base, { body: { name: `gd ${n}` } });
    if (g.status !== 200) return undefined;
    const m = await call(c, 'POST', `${base}/${g.body.id}/members`, { body: { email: `gd-own-${n}@example.com`, roles: ['x'] } });
    if (m.status !== 200) return undefined;
    const inv = await call(c, 'POST', `${base}/${g.body.id}/invites`, { body: { email: `gd-inv-${n}@example.com`, roles: ['y'] } });
    if (inv.status !== 200) return undefined;
    const d = await call(c, 'DELETE', `${base}/${g.body.id}`);
    return d.status === 204 ? { groupId: g.body.id, userId: m.body.user_id } : undefined;
  },
  async missing(c, acks) {
    return lostAmong(acks, async (a) => {
      const r = await call(c, 'GET', `/applications/${c.defaultApp.id}/groups/${a.groupId}`);
      const p = await call(c, 'GET', `/applications/${c.defaultApp.id}/users/${a.userId}/data`);
      return r.status !== 404 || p.body?.groups?.some((x: any) => x.group.id === a.groupId);
    });
  },
};

/** An invite of a signed-in user, rejected by that user (even n) or deleted by the app. */
const inviteAnswer: WriteKind<{ groupId: string; inviteId: string; state: string }> = {
  name: 'invite rejected on /me, or deleted',
  async write(c, n) {
    const base = `/applications/${c.defaultApp.id}/groups`;
    const g = await call(c, 'POST', base, { body: { name: `ia ${n}` } });
    if (g.status !== 200) return undefined;
    const who = await signIn(c, `ia-${n}@example.com`);
    if (!who) return undefined;
    const inv = await call(c, 'POST', `${base}/${g.body.id}/invites`, { body: { user_id: who.userId, roles: ['y'] } });
    if (inv.status !== 200) return undefined;
    const inviteId = inv.body.invitation.id;
    if (n % 2 === 0) {
      const r = await call(c, 'POST', `/me/groups/${g.body.id}/invites/${inviteId}/reject`, { token: who.token });
      return r.status === 200 ? { groupId: g.body.id, inviteId, state: 'rejected' } : undefined;
    }
    const r = await call(c, 'DELETE', `${base}/${g.body.id}/invites/${inviteId}`);
    return r.status === 204 ? { groupId: g.body.id, inviteId, state: 'gone' } : undefined;
  },
  async missing(c, acks) {
    return lostAmong(acks, async (a) => {
      const r = await call(c, 'GET', `/applications/${c.defaultApp.id}/groups/${a.groupId}/invites/${a.inviteId}`);
      return a.state === 'gone' ? r.status !== 404 : r.body?.state !== 'rejected';
    });
  },
};

/** An OIDC client made, a second credential added, then its first credential deleted. */
interface OidcAck {
  id: string;
  clientId: string;
  /** The delete of the first credential was sent; `removed` once it was acknowledged. */
  deleting?: true;
  removed?: true;
}

const oidcCredentials: WriteKind<OidcAck> = {
  name: 'oidc client create, credential add and delete',
  async write(c, n) {
    const base = `/applications/${c.defaultApp.id}/oidc-clients`;
    const made = await call(c, 'POST', base, { body: { name: `oc ${n}` } });
    if (made.status !== 200) return undefined;
    const ack: OidcAck = { id: made.body.id, clientId: made.body.credentials[0].client_id };
    await untilKilled(async () => {
      const cr = await call(c, 'POST', `${base}/${ack.id}/credentials`, { body: { name: 'two' } });
      if (cr.status !== 200) return;
      ack.deleting = true;
      const d = await call(c, 'DELETE', `${base}/${ack.id}/credentials/${ack.clientId}`);
      if (d.status === 204) ack.removed = true;
    });
    return ack;
  },
  async missing(c, acks) {
    return lostAmong(acks, async (a) => {
      const r = await call(c, 'GET', `/applications/${c.defaultApp.id}/oidc-clients/${a.id}`);
      const has = r.body?.credentials?.some((x: any) => x.client_id === a.clientId);
      // A delete killed before its answer may or may not have been committed.
      const kept = a.removed ? !has : a.deleting || has;
      return r.status !== 200 || !kept;
    });
  },
};

/** A signed-in user writes its profile on /me, then (odd n) the app disables it. */
const meWrites: WriteKind<{ userId: string; name: string; disabled: boolean }> = {
  name: '/me write, then maybe disabled',
  async write(c, n) {
    const who = await signIn(c, `me-${n}@example.com`);
    if (!who) return undefined;
    const name = `Me ${n}`;
    const r = await call(c, 'PATCH', `/me/applications/${c.defaultApp.id}/data`, { token: who.token, body: { data: { first_name: name } } });
    if (r.status !== 200) return undefined;
    const ack = { userId: who.userId, name, disabled: false };
    if (n % 2) {
      await untilKilled(async () => {
        const s = await call(c, 'POST', `/applications/${c.defaultApp.id}/users/${who.userId}/state`, { body: { state: 'disabled' } });
        if (s.status === 200) ack.disabled = true;
      });
    }
    return ack;
  },
  async missing(c, acks) {
    return lostAmong(acks, async (a) => {
      const r = await call(c, 'GET', `/applications/${c.defaultApp.id}/users/${a.userId}/data`);
      return r.body?.data?.first_name !== a.name || (a.disabled && r.body?.state !== 'disabled');
    });
  },
};

/** Changes that delete or answer across several records, each of which must be one commit. */
export const removalKinds: WriteKind<any>[] = [userDelete, groupDelete, inviteAnswer, oidcCredentials, meWrites];
