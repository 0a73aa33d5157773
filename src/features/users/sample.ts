import { isoDate } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { IMPLICIT_FIELDS, type FieldType } from '../applications/schemas.js';
import type { Application } from '../applications/store.js';
import type { UserContext } from '../../../machines/user.machine.js';
import type { ProfileViews } from './profile-views.js';

const EXAMPLE_BY_NAME: Record<string, unknown> = {
  email: 'ada@example.com',
  phone_number: '+15555550123',
  first_name: 'Ada',
  last_name: 'Lovelace',
};

const EXAMPLE_BY_TYPE: Record<FieldType, unknown> = {
  string: 'example',
  number: 42,
  boolean: true,
  object: { example: true },
  image: { content_type: 'image/png', size: 2048, sha256: '0'.repeat(64) },
  file: { content_type: 'application/pdf', size: 4096, sha256: '0'.repeat(64) },
};

/** `GET …/users/__sample__/data`: JSON text of a profile of the app's schema filled with example values; nothing stored. */
export function sampleProfile(profiles: ProfileViews, app: Application, now: number): string {
  const id = newId('user', now);
  const data: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries({ ...IMPLICIT_FIELDS, ...app.schema.fields })) {
    // Own keys only: a field named `toString` must not find Object.prototype's.
    data[name] = Object.hasOwn(EXAMPLE_BY_NAME, name) ? EXAMPLE_BY_NAME[name] : EXAMPLE_BY_TYPE[spec.type];
  }
  data.user_id = id;
  const at = isoDate(now);
  const context: UserContext = {
    appId: app.id,
    id,
    data,
    verified_data: { email: data.email as string, phone_number: data.phone_number as string },
    attributes: {},
    auth_level: 'verified',
    meta: {
      created: at,
      modified: at,
      first_sign_in: at,
      last_sign_in: at,
      last_active: at,
      first_sign_in_method: 'magic_link',
      last_sign_in_method: 'magic_link',
      last_passkey_registration_prompt: at,
    },
    revokedBefore: 0,
    revokedSessions: [],
  };
  const { platformHead, tail } = profiles.renderBodies({ state: 'enabled', context }, app.schema);
  return `${platformHead}[]${tail}`;
}
