import t, { type Test } from 'tap';
import { startServer, type TestServer } from '../../helpers/server.js';
import { platform } from '../groups/helpers.js';

const EMAIL_RULE = 'an email address (text around one @, without spaces, commas, control characters, bidirectional controls, line separators or invisible characters) of at most 254 characters';
const PHONE_RULE = 'a phone number such as +1 555 000 1234 (4 to 33 characters: digits, spaces and ().-, after an optional +)';

/** Every place an address is given: a profile write, a platform magic link, a member, an invite. */
function writers(server: TestServer, groupId: string) {
  const api = platform(server);
  return {
    profile: (field: 'email' | 'phone_number', value: string) => api.put(`/users/u-${Math.random().toString(36).slice(2)}/data`, { data: { [field]: value } }),
    magicLink: (field: 'email' | 'phone_number', value: string) =>
      server.request('POST', '/hub/auth/magic', {
        app: server.app,
        body: { verification_type: field === 'email' ? 'email' : 'phone', data: { [field]: value } },
      }),
    member: (field: 'email' | 'phone', value: string) => api.post(`/groups/${groupId}/members`, { [field]: value, roles: [] }),
    invite: (field: 'email' | 'phone', value: string) => api.post(`/groups/${groupId}/invites`, { [field]: value, roles: [] }),
  };
}

/**
 * `value` is refused alike wherever an address of `kind` is given: 400 naming its field with `rule`
 * (a profile's and a link's field is `phone_number` for a phone, a group body's is `phone`).
 */
async function refusedEverywhere(t: Test, write: ReturnType<typeof writers>, kind: 'email' | 'phone', value: string, rule: string): Promise<void> {
  const field = kind === 'email' ? 'email' : 'phone_number';
  for (const [where, res, errors] of [
    ['profile', await write.profile(field, value), { [field]: [`must be ${rule}`] }],
    ['magic link', await write.magicLink(field, value), { [`data.${field}`]: [`must be ${rule}`] }],
    ['member', await write.member(kind, value), { [kind]: [`${kind} must be ${rule}`] }],
    ['invite', await write.invite(kind, value), { [kind]: [`${kind} must be ${rule}`] }],
  ] as const) {
    t.equal(res.status, 400, `${where} ${value}`);
    t.same(res.body.field_errors, errors, `${where} ${value}`);
  }
}

t.test('one email rule for profiles, magic links, members and invites', async (t) => {
  const server = await startServer(t);
  const group = (await platform(server).post('/groups', { name: 'Crew' })).body;
  const write = writers(server, group.id);
  for (const refused of ['a,b@example.com', 'ada@example.com,bob@example.com', 'ada example@example.com', 'no-at-sign', `${'a'.repeat(250)}@x.io`]) {
    await refusedEverywhere(t, write, 'email', refused, EMAIL_RULE);
  }
  t.equal(server.deps.users.count(server.app.id), 0, 'no user was made');

  // An address a profile takes names its user in a group too, not a 400.
  const made = await platform(server).put('/users/ops/data', { data: { email: 'ops@intranet' } });
  t.equal(made.status, 200, made.text);
  const member = await write.member('email', 'Ops@Intranet');
  t.equal(member.status, 200, member.text);
  t.equal(member.body.user_id, 'ops', 'the member is the user holding the address');
});

t.test('one phone number rule for profiles, magic links, members and invites', async (t) => {
  const server = await startServer(t);
  const group = (await platform(server).post('/groups', { name: 'Crew' })).body;
  const write = writers(server, group.id);
  for (const refused of ['123', '+12', 'call me', '1'.repeat(34)]) await refusedEverywhere(t, write, 'phone', refused, PHONE_RULE);
  t.equal(server.deps.users.count(server.app.id), 0, 'no user was made');

  const made = await platform(server).put('/users/shortest/data', { data: { phone_number: '1234' } });
  t.equal(made.status, 200, 'four characters are a phone number everywhere');
  const member = await write.member('phone', '1234');
  t.equal(member.body.user_id, 'shortest', 'and name the same user in a group');
});
