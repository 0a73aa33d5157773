import { forbidden, validationError } from '../../lib/errors.js';
import { parseJsonBody, parseQuery } from '../../lib/validate.js';
import { jsonBytes, noContent, ok } from '../../http/reply.js';
import type { Route } from '../../http/route.js';
import type { RequestContext } from '../../http/context.js';
import type { Deps } from '../../deps.js';
import { fieldSpec } from '../applications/schemas.js';
import type { ChangeMode, Precheck, SchemaOf } from './profile-change.js';
import type { ProfileFiles } from './profile-files.js';
import type { ProfileService } from './service.js';
import { listProfiles, projectProfile } from './listing.js';
import { sampleProfile } from './sample.js';
import { fieldReply, profileReply } from './replies.js';
import { existingUserId } from './path-user.js';
import { readFieldChange, readProfileChange } from './request-body.js';
import {
  GENERATE_ID,
  isUserId,
  PlatformFieldQuerySchema,
  ProfileQuerySchema,
  SAMPLE_ID,
  StateBodySchema,
  checkUpsertQuery,
  PROFILE_BODY_KINDS,
  parseListQuery,
  readOnlyProfileKeys,
} from './schemas.js';

/** Profile endpoints for app credentials (SPEC "User profiles (platform)", ADDENDUM §3). */
export function platformProfileRoutes(deps: Deps, service: ProfileService, files: ProfileFiles): Route[] {
  const { profiles, users, apps, requireApp } = deps;
  const before = [requireApp];

  const profile = (appId: string, userId: string) => profileReply(profiles.platformBytes(appId, userId), userId);

  /**
   * The user ID an upsert names, undefined for `__uuid__`/`__default__`, which ask for a new one. One
   * no user can have is a 400, not a 404: the upsert would create it.
   */
  const writeTarget = (ctx: RequestContext): string | undefined => {
    const requested = ctx.params.user;
    if (GENERATE_ID.has(requested)) return undefined;
    if (!isUserId(requested)) {
      throw validationError({ user: ['user IDs are 1 to 128 characters of A-Z a-z 0-9 _ . : @ | + - (not __sample__)'] });
    }
    return requested;
  };

  const write = (mode: ChangeMode) => {
    const readOnly = readOnlyProfileKeys(mode, deps.config.names.userField);
    return async (ctx: RequestContext) => {
      const appId = ctx.params.app;
      checkUpsertQuery(ctx);
      const read = (schemaOf: SchemaOf, precheck: Precheck) => readProfileChange(ctx.body, schemaOf, 'app', precheck, readOnly, files);
      const userId = await service.write(appId, writeTarget(ctx), read, { writer: 'app', mode, create: true });
      return profile(appId, userId);
    };
  };

  return [
    {
      method: 'GET',
      path: '/applications/:app/users/data',
      before,
      query: 'parsed',
      handle: (ctx) => jsonBytes(listProfiles(users, profiles, ctx.params.app, parseListQuery(ctx))),
    },
    {
      method: 'GET',
      path: `/applications/:app/users/${SAMPLE_ID}/data`,
      before,
      query: 'parsed',
      handle(ctx) {
        const { fields } = parseQuery(ctx, ProfileQuerySchema);
        const sample = sampleProfile(profiles, apps.require(ctx.params.app), deps.clock.now());
        return fields ? ok(projectProfile(Buffer.from(sample), fields)) : jsonBytes(sample);
      },
    },
    {
      method: 'GET',
      path: '/applications/:app/users/:user/data',
      before,
      query: 'parsed',
      // The hottest route: no projection asked, the prepared bytes go out as they are.
      handle(ctx) {
        const appId = ctx.params.app;
        const fields = ctx.rawQuery === '' ? undefined : parseQuery(ctx, ProfileQuerySchema).fields;
        const userId = existingUserId(ctx);
        const bytes = profiles.platformBytes(appId, userId);
        return fields && bytes ? ok(projectProfile(bytes, fields)) : profileReply(bytes, userId);
      },
    },
    { method: 'PUT', path: '/applications/:app/users/:user/data', before, body: PROFILE_BODY_KINDS, query: 'parsed', handle: write('replace') },
    { method: 'PATCH', path: '/applications/:app/users/:user/data', before, body: PROFILE_BODY_KINDS, query: 'parsed', handle: write('merge') },
    {
      method: 'DELETE',
      path: '/applications/:app/users/:user/data',
      before,
      async handle(ctx) {
        await service.remove(ctx.params.app, existingUserId(ctx));
        return noContent();
      },
    },
    {
      method: 'POST',
      path: '/applications/:app/users/:user/state',
      before,
      async handle(ctx) {
        const { state } = parseJsonBody(ctx, StateBodySchema);
        const userId = existingUserId(ctx);
        await service.setState(ctx.params.app, userId, state);
        return profile(ctx.params.app, userId);
      },
    },
    {
      method: 'GET',
      path: '/applications/:app/users/:user/data/fields/:field',
      before,
      query: 'parsed',
      handle(ctx) {
        const { app: appId, field } = ctx.params;
        const query = parseQuery(ctx, PlatformFieldQuerySchema);
        const userId = existingUserId(ctx);
        const user = users.require(appId, userId);
        const spec = fieldSpec(apps.require(appId).schema, field);
        const data = user.context.data;
        const value = Object.hasOwn(data, field) ? data[field] : undefined;
        // A disabled user's data is not shared field by field (decision recorded in docs/API.md).
        if (user.state === 'disabled' && value !== undefined) {
          if (query.fail_on_error) throw forbidden('The user is disabled: its data is not shared');
          return ok({ value: null });
        }
        return fieldReply(files, { appId, userId, field }, spec, value, query.preview);
      },
    },
    {
      method: 'PUT',
      path: '/applications/:app/users/:user/data/fields/:field',
      before,
      body: PROFILE_BODY_KINDS,
      query: 'parsed',
      async handle(ctx) {
        const { app: appId, field } = ctx.params;
        checkUpsertQuery(ctx);
        const userId = existingUserId(ctx);
        // Held to the change rules, as in a PATCH: null removes a field the schema stopped allowing, and
        // user_id passes only unchanged.
        await service.write(appId, userId, (schemaOf) => readFieldChange(ctx.body, field, schemaOf, 'app', files), { writer: 'app', mode: 'merge' });
        return profile(appId, userId);
      },
    },
  ];
}
