import { createHash } from 'node:crypto';
import { blackPng } from '../helpers/png.js';
import { lostAmong, untilKilled } from './acks.js';
import { call } from './api-calls.js';
import type { CrashContext, WriteKind } from './write-kinds.js';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Over the 16 KiB past which an answer is ended by tryEnd/onWritable: the upsert's answer holds it. */
const LONG_BIO = 'b'.repeat(20 * 1024);

interface UpsertAck {
  userId: string;
  firstName: string;
  sha256: string;
}

/**
 * A new user by an upsert to `__uuid__` (even n) or `__default__`, its ID drawn in the turn after its
 * image passed the decode gate; its answer is over 16 KiB (a cut one fails to parse: never acknowledged).
 * Acknowledged = the answer's ID holds the data and the image.
 */
const generatedUpsert: WriteKind<UpsertAck> = {
  name: 'upsert to __uuid__/__default__ with an image, answer over 16 KiB',
  async write(c, n) {
    // Each n a picture of its own size, so each user's image is told apart by its SHA-256.
    const photo = new Uint8Array(blackPng(16 + (n % 97), 16 + (Math.floor(n / 97) % 97)));
    const firstName = `Gen ${n}`;
    const form = new FormData();
    form.set('data', JSON.stringify({ first_name: firstName, bio: LONG_BIO }));
    form.set('photo', new Blob([photo], { type: 'image/png' }), 'p.png');
    const target = n % 2 ? '__default__' : '__uuid__';
    const r = await call(c, 'PUT', `/applications/${c.defaultApp.id}/users/${target}/data`, { form });
    if (r.status !== 200) return undefined;
    return { userId: r.body.svc_user, firstName, sha256: sha256(photo) };
  },
  async missing(c, acks) {
    return lostAmong(acks, async (a) => {
      const path = `/applications/${c.defaultApp.id}/users/${a.userId}/data`;
      const p = await call(c, 'GET', path);
      const file = await fetch(`${c.server.url}${path}/fields/photo`, { headers: { 'x-svc-app-key': c.defaultApp.key, 'x-svc-app-secret': c.defaultApp.secret } });
      const bytes = new Uint8Array(await file.arrayBuffer());
      const intact = p.body?.data?.first_name === a.firstName && p.body.data.bio === LONG_BIO && p.body.data.photo?.sha256 === a.sha256;
      return !intact || file.status !== 200 || sha256(bytes) !== a.sha256;
    });
  },
};

interface EnsuredAck {
  userId: string;
  field: 'email' | 'phone_number';
  address: string;
  /** The group the user was made a member of (or invited to), absent for a magic link. */
  groupId?: string;
  /** The magic link's path: it signs that user in once (checked by redeeming it, 410 after). */
  link?: string;
}

/**
 * A user made from an address, its ID drawn in the turn: a member by phone, an invite by email, or a
 * platform magic link by phone (n mod 3). Acknowledged = the answered user holds the address, the
 * member or pending invite shows in its profile's groups, and the link signs that user in once.
 */
const ensuredByAddress: WriteKind<EnsuredAck> = {
  name: 'user ensured by address (member by phone, invite by email, magic link by phone)',
  async write(c, n) {
    const base = `/applications/${c.defaultApp.id}/groups`;
    const phone = `+1555${String(n).padStart(9, '0')}`;
    if (n % 3 === 2) {
      const link = await call(c, 'POST', '/hub/auth/magic', { body: { verification_type: 'phone', data: { phone_number: phone } } });
      if (link.status !== 200) return undefined;
      return { userId: link.body.app_user_id, field: 'phone_number', address: phone, link: new URL(link.body.link).pathname };
    }
    const g = await call(c, 'POST', base, { body: { name: `ens ${n}` } });
    if (g.status !== 200) return undefined;
    if (n % 3 === 0) {
      const m = await call(c, 'POST', `${base}/${g.body.id}/members`, { body: { phone, roles: ['x'] } });
      return m.status === 200 ? { userId: m.body.user_id, field: 'phone_number', address: phone, groupId: g.body.id } : undefined;
    }
    const email = `ens-${n}@example.com`;
    const i = await call(c, 'POST', `${base}/${g.body.id}/invites`, { body: { email, roles: ['y'] } });
    return i.status === 200 ? { userId: i.body.invitation.ensured_user_id, field: 'email', address: email, groupId: g.body.id } : undefined;
  },
  async missing(c, acks) {
    return lostAmong(acks, async (a) => {
      const p = await call(c, 'GET', `/applications/${c.defaultApp.id}/users/${a.userId}/data`);
      const inGroup = a.groupId === undefined || p.body?.groups?.some((x: any) => x.group.id === a.groupId && x.member.user_id === a.userId);
      const redeemed = a.link === undefined ? undefined : await call(c, 'GET', a.link);
      const linkHeld = !redeemed || redeemed.body?.app_user_id === a.userId || redeemed.body?.code === 'E_LINK_EXPIRED';
      return p.body?.data?.[a.field] !== a.address || !inGroup || !linkHeld;
    });
  },
};

interface JoinAck {
  groupId: string;
  /** Set once a `group_to_join` link was redeemed: the user who joined. */
  userId?: string;
}

/**
 * An open group made, then joined through a `group_to_join` link, the member's ID drawn in the
 * redemption's turn. Acknowledged = the group exists, and once redeemed, its one member is the user,
 * active and owner, in the group's list and in the user's profile.
 */
const groupToJoin: WriteKind<JoinAck> = {
  name: 'open group joined by a group_to_join link',
  async write(c, n) {
    const base = `/applications/${c.defaultApp.id}/groups`;
    const g = await call(c, 'POST', base, { body: { name: `join ${n}`, admission_policy: 'open' } });
    if (g.status !== 200) return undefined;
    const ack: JoinAck = { groupId: g.body.id };
    await untilKilled(async () => {
      const link = await call(c, 'POST', '/hub/auth/magic', {
        body: { verification_type: 'email', data: { email: `join-${n}@example.com` }, group_to_join: ack.groupId },
      });
      if (link.status !== 200) return;
      const redeemed = await call(c, 'GET', new URL(link.body.link).pathname);
      if (redeemed.status === 200) ack.userId = redeemed.body.app_user_id;
    });
    return ack;
  },
  async missing(c, acks) {
    const base = `/applications/${c.defaultApp.id}/groups`;
    return lostAmong(acks, async (a) => {
      const g = await call(c, 'GET', `${base}/${a.groupId}`);
      if (g.status !== 200) return true;
      if (a.userId === undefined) return false;
      const members = await call(c, 'GET', `${base}/${a.groupId}/members`);
      const p = await call(c, 'GET', `/applications/${c.defaultApp.id}/users/${a.userId}/data`);
      const [member] = members.body?.results ?? [];
      const joined =
        g.body.member_count === 1 &&
        members.body?.total_results === 1 &&
        member.user_id === a.userId &&
        member.state === 'active' &&
        member.roles.includes('owner') &&
        p.body?.groups?.some((x: any) => x.group.id === a.groupId && x.member.id === member.id);
      return !joined;
    });
  },
};

/** Writes that draw a new record's ID inside their turn (`Turn.lockNew`), and the image and large-answer paths. */
export const newIdKinds: WriteKind<any>[] = [generatedUpsert, ensuredByAddress, groupToJoin];
