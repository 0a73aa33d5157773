import t from 'tap';
import { startServer } from '../../helpers/server.js';
import { holdLocks, queueOn } from '../../helpers/locks.js';
import { userLock } from '../../../src/features/users/directory.js';
import { groupLock } from '../../../src/features/groups/keys.js';
import { groupOf, person, platform } from './helpers.js';

// Lists page by ID: an item committed after a client read the end of a list must sort after it, or
// `after` skips it for good. A turn that must be run again for a lock it lacked (a user named by an
// address it did not know of) used to keep the IDs it drew before the turns that overtook it.
for (const [kind, path, body] of [
  ['invite', 'invites', { email: 'bob@example.com', roles: [] }],
  ['member', 'members', { email: 'bob@example.com', roles: [] }],
] as const) {
  t.test(`${kind === 'invite' ? 'an' : 'a'} ${kind} made after waiting for its user's lock is listed after the ${kind}s committed before it`, async (t) => {
    const server = await startServer(t);
    const api = platform(server);
    const ada = await person(server, 'ada@example.com');
    const bob = await person(server, 'bob@example.com');
    const cy = await person(server, 'cy@example.com');
    const { group } = await groupOf(server, ada);
    const idOf = (res: { body: any }) => (kind === 'invite' ? res.body.invitation.id : res.body.id);
    const lock = groupLock(server.app.id, group.id);
    const last = (await api.get(`/groups/${group.id}/${path}`)).body.results.at(-1)?.id;

    // Bob is busy (a profile write, say) while the group serves two requests in a row.
    const releaseBob = await holdLocks(server, [userLock(server.app.id, bob.userId)]);
    const releaseGroup = await holdLocks(server, [lock]);
    const forBob = await queueOn(server, lock, () => api.post(`/groups/${group.id}/${path}`, body));
    const forCy = await queueOn(server, lock, () => api.post(`/groups/${group.id}/${path}`, { user_id: cy.userId, roles: [] }));
    releaseGroup();
    const cyAnswer = await forCy.answer;
    t.equal(cyAnswer.status, 200);
    const seen = await api.get(`/groups/${group.id}/${path}${last ? `?after=${last}` : ''}`);
    t.same(seen.body.results.map((item: { id: string }) => item.id), [idOf(cyAnswer)], "a client reads the list's end: Cy's");

    releaseBob();
    const bobAnswer = await forBob.answer;
    t.equal(bobAnswer.status, 200);
    const next = await api.get(`/groups/${group.id}/${path}?after=${idOf(cyAnswer)}`);
    t.same(next.body.results.map((item: { id: string }) => item.id), [idOf(bobAnswer)], "Bob's, committed later, is on the page after that end");
  });
}
