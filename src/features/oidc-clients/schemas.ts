import * as v from 'valibot';
import { isAbsoluteHttpUrl, isHttpOrigin, USERINFO_REFUSED, withoutUserinfo } from '../../lib/urls.js';
import { jsonObject, jsonRecord, maxCharacters, NO_MISLEADING_CHARACTERS, oneLineOfText, takingReadOnly } from '../../lib/validate.js';
import { EXTERNAL_ID, idPattern } from '../../lib/ids.js';
import { isTimestamp } from '../../lib/timestamps.js';

const DEFAULT_SCOPES: readonly string[] = Object.freeze(['openid', 'profile', 'email']);
const HUB_DARK_MODES = ['enabled', 'disabled', 'auto'] as const;

const MAX_URL_LENGTH = 2048;
const MAX_LIST_LENGTH = 100;
/** RFC 6749 §3.3 scope-token: printable ASCII except space, `"` and `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/;

/** Messages for an object's key issues (its type is checked by `jsonObject` before). */
const keyMessage = (issue: v.BaseIssue<unknown>) => (issue.expected === 'never' ? 'is not a known field' : 'is required');

const HttpUrl = v.pipe(
  v.string('must be a URL string'),
  v.maxLength(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`),
  // Shown to whoever reads the client, as its name is.
  NO_MISLEADING_CHARACTERS,
  v.check(isAbsoluteHttpUrl, 'must be an absolute http(s) URL'),
  v.check(withoutUserinfo, USERINFO_REFUSED),
);

const RedirectUri = v.pipe(
  HttpUrl,
  v.check((value) => !value.includes('#'), 'must not contain a fragment'),
);

/** An entry is meant to match a browser's `Origin` header: one that never could would be kept and silently match nothing. */
const Origin = v.pipe(
  HttpUrl,
  v.check(isHttpOrigin, 'must be an origin as browsers send it: scheme://host[:port] in lower case, with no default port, path, wildcard or anything else'),
);

const listOf = <S extends v.GenericSchema>(item: S, what: string) =>
  v.pipe(
    v.array(item, `must be an array of ${what}`),
    v.maxLength(MAX_LIST_LENGTH, `must hold at most ${MAX_LIST_LENGTH} entries`),
  );

const Scope = v.pipe(
  v.string('must be a string'),
  v.regex(SCOPE_TOKEN, 'must be a scope token: 1 to 128 printable characters without spaces, quotes or backslashes'),
);

/** SPEC "OIDC `config` fields" with ADDENDUM §6. */
const KnownConfigFields = v.looseObject(
  {
    allowed_origins: v.optional(listOf(Origin, 'origins')),
    redirect_uris: v.optional(listOf(RedirectUri, 'URLs')),
    post_logout_uris: v.optional(listOf(HttpUrl, 'URLs')),
    logo_uri: v.optional(v.nullable(HttpUrl)),
    logo_dark_mode_uri: v.optional(v.nullable(HttpUrl)),
    allowed_scopes: v.optional(listOf(Scope, 'scopes'), () => [...DEFAULT_SCOPES]),
    hub_title: v.optional(v.nullable(v.pipe(v.string('must be a string'), maxCharacters(200, 'must be at most 200 characters'), NO_MISLEADING_CHARACTERS))),
    hub_dark_mode: v.optional(v.picklist(HUB_DARK_MODES, `must be one of ${HUB_DARK_MODES.join(', ')}`)),
    hub_show_logos: v.optional(v.boolean('must be true or false')),
    is_pkce_supported: v.optional(v.boolean('must be true or false')),
  },
  keyMessage,
);

/**
 * Keys SPEC does not name are kept as given, up to this much JSON (as much as a group's `meta`): a
 * client is decoded whole on every read, and 1 MiB of small keys took a quarter of a second to decode.
 */
const OTHER_CONFIG_LIMIT = 16 * 1024;

const otherKeysFit = (config: v.InferOutput<typeof KnownConfigFields>) => {
  const others = Object.entries(config).filter(([key]) => !Object.hasOwn(KnownConfigFields.entries, key));
  return Buffer.byteLength(JSON.stringify(Object.fromEntries(others))) <= OTHER_CONFIG_LIMIT;
};

/** `config`: the fields SPEC names, checked, and any other key kept as given. */
export const OidcConfigSchema = jsonRecord(
  v.pipe(KnownConfigFields, v.check(otherKeysFit, `keys SPEC does not name may hold at most ${OTHER_CONFIG_LIMIT} bytes as JSON`)),
  'must be an object',
);

export type OidcConfig = v.InferOutput<typeof OidcConfigSchema>;

/** Every config field SPEC names, as a client shows it when it was not given (null: no value). */
export const CONFIG_DEFAULTS: Readonly<OidcConfig> = Object.freeze({
  allowed_origins: [],
  redirect_uris: [],
  post_logout_uris: [],
  logo_uri: null,
  logo_dark_mode_uri: null,
  allowed_scopes: DEFAULT_SCOPES as string[],
  hub_title: null,
  hub_dark_mode: 'auto',
  hub_show_logos: true,
  is_pkce_supported: true,
});

const Name = oneLineOfText(200, { notText: 'must be a string', empty: 'must not be empty', tooLong: 'must be at most 200 characters' });

/** Fields a client answers with that a caller may echo back on PUT (POST too): accepted and ignored. */
const READ_ONLY = ['id', 'app_id', 'created_at', 'updated_at', 'credentials'];

/** POST creates and PUT replaces with one body shape: name, description and config as a whole. */
const clientBody = <NameOut extends string | undefined>(name: v.GenericSchema<unknown, NameOut>) =>
  jsonObject(
    takingReadOnly(
      v.strictObject(
        {
          name,
          description: v.optional(
            v.pipe(v.string('must be a string'), maxCharacters(1000, 'must be at most 1000 characters')),
            '',
          ),
          config: v.optional(OidcConfigSchema, {}),
        },
        keyMessage,
      ),
      READ_ONLY,
    ),
    'must be a JSON object',
  );

export const ClientBodySchema = clientBody(Name);

/** SPEC requires `name` on creation only: on PUT an absent one keeps the client's. */
export const ClientUpdateSchema = clientBody(v.optional(Name));

export type ClientBody = v.InferOutput<typeof ClientBodySchema>;
export type ClientUpdate = v.InferOutput<typeof ClientUpdateSchema>;

/** `POST …/{client}/credentials`: every field optional (a missing body counts as `{}`). */
export const CredentialBodySchema = jsonObject(
  v.strictObject(
    {
      name: v.optional(Name),
      app_variant_id: v.optional(
        v.pipe(v.string('must be a string'), v.regex(EXTERNAL_ID, 'must be 1 to 128 characters of [A-Za-z0-9_.:@|+-]')),
      ),
      expires: v.optional(
        v.pipe(
          v.string('must be an ISO 8601 date-time'),
          v.check(isTimestamp, 'must be an ISO 8601 date-time with a time zone, like 2027-01-31T12:00:00Z'),
        ),
      ),
    },
    keyMessage,
  ),
  'must be a JSON object',
);

export type CredentialBody = v.InferOutput<typeof CredentialBodySchema>;

/** What `after` may be on the client list: an OIDC client ID. */
export const CLIENT_ID_PATTERN = idPattern('oidc_client');
