import { forbidden, notFound } from '../../lib/errors.js';
import { parseJsonBody, parseQuery } from '../../lib/validate.js';
import type { Route } from '../../http/route.js';
import type { RequestContext } from '../../http/context.js';
import { callerUser } from '../../auth/bearer-auth.js';
import type { Deps } from '../../deps.js';
import { fieldSpec } from '../applications/schemas.js';
import type { ChangeMode } from './profile-change.js';
import type { ProfileFiles } from './profile-files.js';
import type { ProfileService } from './service.js';
import { fieldReply, profileReply } from './replies.js';
import { readFieldChange, readProfileChange } from './request-body.js';
import { FieldQuerySchema, MetaBodySchema, PROFILE_BODY_KINDS, readOnlyProfileKeys, checkUpsertQuery } from './schemas.js';

/** The caller's own profile (SPEC "User profiles (user-facing)"), within the schema's user rights. */
export function meProfileRoutes(deps: Deps, service: ProfileService, files: ProfileFiles): Route[] {
  const { profiles, users, apps, requireUser } = deps;
  const before = [requireUser];

  const profile = (appId: string, userId: string) => profileReply(profiles.meBytes(appId, userId), userId);

  const write = (mode: ChangeMode) => {
    const readOnly = readOnlyProfileKeys(mode, deps.config.names.userField);
    return async (ctx: RequestContext) => {
      const caller = callerUser(ctx);
      const { appId, userId } = caller;
      checkUpsertQuery(ctx);
      await service.write(appId, userId, (schemaOf, precheck) => readProfileChange(ctx.body, schemaOf, 'user', precheck, readOnly, files), { writer: 'user', mode, caller });
      return profile(appId, userId);
    };
  };

  return [
    {
      method: 'GET',
      path: '/me/applications/:app/data',
      before,
      handle(ctx) {
        const { appId, userId, view } = callerUser(ctx);
        return profileReply(profiles.meBytes(appId, userId, view), userId);
      },
    },
    { method: 'PUT', path: '/me/applications/:app/data', before, body: PROFILE_BODY_KINDS, query: 'parsed', handle: write('replace') },
    { method: 'PATCH', path: '/me/applications/:app/data', before, body: PROFILE_BODY_KINDS, query: 'parsed', handle: write('merge') },
    {
      method: 'GET',
      path: '/me/applications/:app/data/fields/:field',
      before,
      query: 'parsed',
      handle(ctx) {
        const { appId, userId } = callerUser(ctx);
        const { field } = ctx.params;
        const { preview } = parseQuery(ctx, FieldQuerySchema);
        const spec = fieldSpec(apps.require(appId).schema, field);
        if (!spec) throw notFound('field', field);
        if (!spec.user_readable) throw forbidden(`Field ${field} is not readable by the user`);
        const data = users.require(appId, userId).context.data;
        return fieldReply(files, { appId, userId, field }, spec, Object.hasOwn(data, field) ? data[field] : undefined, preview);
      },
    },
    {
      method: 'PUT',
      path: '/me/applications/:app/data/fields/:field',
      before,
      body: PROFILE_BODY_KINDS,
      query: 'parsed',
      async handle(ctx) {
        const caller = callerUser(ctx);
        const { appId, userId } = caller;
        const { field } = ctx.params;
        checkUpsertQuery(ctx);
        // A field outside the schema is refused by the change rules, as it is in a PATCH.
        await service.write(appId, userId, (schemaOf) => readFieldChange(ctx.body, field, schemaOf, 'user', files), { writer: 'user', mode: 'merge', caller });
        return profile(appId, userId);
      },
    },
    {
      method: 'PUT',
      path: '/me/meta',
      before,
      async handle(ctx) {
        const caller = callerUser(ctx);
        const body = parseJsonBody(ctx, MetaBodySchema);
        await service.promptPasskey(caller.appId, caller, body.last_passkey_registration_prompt);
        return profile(caller.appId, caller.userId);
      },
    },
  ];
}
