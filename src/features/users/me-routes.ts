import { forbidden, notFound } from '../../lib/errors.js';
import { parseInput } from '../../lib/validate.js';
import { jsonBytes, type Reply } from '../../http/reply.js';
import type { Route } from '../../http/route.js';
import type { RequestContext } from '../../http/context.js';
import { callerUser } from '../../auth/bearer-auth.js';
import type { Deps } from '../../deps.js';
import { fieldSpec } from './profile-views.js';
import type { ChangeMode } from './profile-change.js';
import type { ProfileFiles } from './profile-files.js';
import type { ProfileService } from './service.js';
import { fieldReply } from './field-reply.js';
import { readFieldChange, readProfileChange } from './request-body.js';
import { FieldQuerySchema, MetaBodySchema, parseQuery } from './schemas.js';

const BODY_KINDS = ['json', 'multipart'] as const;

/** The caller's own profile (SPEC "User profiles (user-facing)"), within the schema's user rights. */
export function meProfileRoutes(deps: Deps, service: ProfileService, files: ProfileFiles): Route[] {
  const { profiles, users, apps, requireUser } = deps;
  const before = [requireUser];

  const profileReply = (appId: string, userId: string): Reply => {
    const bytes = profiles.meBytes(appId, userId);
    if (!bytes) throw notFound('user', userId);
    return jsonBytes(bytes);
  };

  const write = (mode: ChangeMode) => async (ctx: RequestContext) => {
    const { appId, userId } = callerUser(ctx);
    const change = await readProfileChange(ctx.body, apps.require(appId).schema);
    await service.write(appId, userId, change, { writer: 'user', mode });
    return profileReply(appId, userId);
  };

  return [
    {
      method: 'GET',
      path: '/me/applications/:app/data',
      before,
      handle(ctx) {
        const { appId, userId } = callerUser(ctx);
        return profileReply(appId, userId);
      },
    },
    { method: 'PUT', path: '/me/applications/:app/data', before, body: BODY_KINDS, handle: write('replace') },
    { method: 'PATCH', path: '/me/applications/:app/data', before, body: BODY_KINDS, handle: write('merge') },
    {
      method: 'GET',
      path: '/me/applications/:app/data/fields/:field',
      before,
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
      body: BODY_KINDS,
      async handle(ctx) {
        const { appId, userId } = callerUser(ctx);
        const { field } = ctx.params;
        const spec = fieldSpec(apps.require(appId).schema, field);
        if (!spec) throw notFound('field', field);
        const change = await readFieldChange(ctx.body, field, spec);
        await service.write(appId, userId, change, { writer: 'user', mode: 'merge' });
        return profileReply(appId, userId);
      },
    },
    {
      method: 'PUT',
      path: '/me/meta',
      before,
      async handle(ctx) {
        const { appId, userId } = callerUser(ctx);
        const body = parseInput(MetaBodySchema, ctx.body.kind === 'json' ? ctx.body.value : undefined);
        await service.promptPasskey(appId, userId, body.last_passkey_registration_prompt);
        return profileReply(appId, userId);
      },
    },
  ];
}
