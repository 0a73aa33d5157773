import type { ProfileData, VerifiedData } from '../../../machines/user.machine.js';
import { holdsMisleadingCharacter } from '../../lib/validate.js';

export type AddressKind = 'email' | 'phone';

/** RFC 5321's longest email address. Addresses are lookup keys, so this also keeps them within LMDB's key size. */
const MAX_EMAIL_LENGTH = 254;

/**
 * Text around one `@` with no whitespace or comma: a comma makes a list of addresses, and
 * `lookup_filter`, a comma list, could never name it. Nor, as in names, a character that shows it
 * otherwise than written (isEmailAddress): group owners read it in invites and member profiles.
 */
const EMAIL_ADDRESS = /^[^\s@,]+@[^\s@,]+$/u;
/**
 * A character shown as nothing (zero-width space and joiners, word joiner, soft hyphen, U+FEFF…):
 * `ceo\u200B@example.com` reads as `ceo@example.com` yet is another address. Names keep them (an
 * emoji needs ZWJ); an address has no use for one.
 */
const INVISIBLE_CHARACTER = /\p{Default_Ignorable_Code_Point}/u;
/** As people write one: an optional `+`, a digit, then digits, spaces and `().-`; 4 to 33 characters. */
const PHONE_NUMBER = /^\+?[0-9][0-9 ().-]{3,31}$/;

/**
 * The shape of an email address, which every one stored has had: an address stored before a
 * character rule of isEmailAddress is still looked up by its value.
 */
const hasEmailShape = (value: string): boolean => value.length <= MAX_EMAIL_LENGTH && EMAIL_ADDRESS.test(value);

/** The one email rule of profiles, magic links, members and invites (a user found by one is a user made by one). */
export const isEmailAddress = (value: string): boolean =>
  hasEmailShape(value) && !holdsMisleadingCharacter(value) && !INVISIBLE_CHARACTER.test(value);
export const EMAIL_RULE = `an email address (text around one @, without spaces, commas, control characters, bidirectional controls, line separators or invisible characters) of at most ${MAX_EMAIL_LENGTH} characters`;

/** The one phone number rule of profiles, magic links, members and invites (ASCII: no misleading character fits it). */
export const isPhoneNumber = (value: string): boolean => PHONE_NUMBER.test(value);
export const PHONE_RULE = 'a phone number such as +1 555 000 1234 (4 to 33 characters: digits, spaces and ().-, after an optional +)';

/**
 * Lookup values compare case-insensitively and in Unicode NFC, so `é` written as `e` and a combining
 * accent is the same address; phone numbers ignore spacing and punctuation. A value normalized before
 * NFC was part of this normalizes to what its address does now (the format step to 9 relies on it).
 */
export function normalizeAddress(kind: AddressKind, value: string): string {
  const folded = value.trim().toLowerCase();
  return (kind === 'email' ? folded : folded.replace(/[\s().-]/g, '')).normalize('NFC');
}

export const addressKindOf = (value: string): AddressKind => (value.includes('@') ? 'email' : 'phone');

/**
 * Each address of `values` once, however often and in whatever case or spacing it is written: each
 * is then a range read of its holders (a `lookup_filter` of one address 1 000 times read them 1 000 times).
 */
export const distinctAddresses = (values: readonly string[]): string[] => [
  ...new Set(values.map((value) => normalizeAddress(addressKindOf(value), value))),
];

/**
 * Whether `value` has the shape of an address of the kind `addressKindOf` reads it as: a lookup value
 * that has not could name no user. The character rules are left out, since an address stored before
 * them holds such characters and is still looked up by them.
 */
export const hasAddressShape = (value: string): boolean => (addressKindOf(value) === 'email' ? hasEmailShape(value) : isPhoneNumber(value));
/** Words for a value refused by hasAddressShape. */
export const ADDRESS_SHAPE_RULE = `an email address (text around one @, without spaces or commas) of at most ${MAX_EMAIL_LENGTH} characters, or ${PHONE_RULE}`;

/** The profile field that holds an address of each kind, in `data` and `verified_data`. */
export const FIELD_OF: Record<AddressKind, 'email' | 'phone_number'> = { email: 'email', phone: 'phone_number' };

/** Every normalized address by which a user can be looked up: from `data` and `verified_data`. */
export function addressesOf(data: ProfileData, verified: VerifiedData): Array<[AddressKind, string]> {
  const found = new Set<string>();
  const out: Array<[AddressKind, string]> = [];
  for (const kind of ['email', 'phone'] as const) {
    for (const source of [data[FIELD_OF[kind]], verified[FIELD_OF[kind]]]) {
      if (typeof source !== 'string' || source === '') continue;
      const value = normalizeAddress(kind, source);
      if (found.has(`${kind}:${value}`)) continue;
      found.add(`${kind}:${value}`);
      out.push([kind, value]);
    }
  }
  return out;
}

/**
 * `verified` once a write has made `data` `before` into `next`: a proved address the write moves out
 * of its field is no longer verified. Left there, it would go on signing in to an account that gave
 * it up, and read as the address the user proved beside one it wrote unproved.
 */
export function stillVerified(before: ProfileData, next: ProfileData, verified: VerifiedData): VerifiedData {
  const kept: VerifiedData = { ...verified };
  for (const kind of ['email', 'phone'] as const) {
    const field = FIELD_OF[kind];
    const proved = verified[field];
    if (proved === undefined) continue;
    const holds = (data: ProfileData) => typeof data[field] === 'string' && normalizeAddress(kind, data[field]) === normalizeAddress(kind, proved);
    if (holds(before) && !holds(next)) delete kept[field];
  }
  return kept;
}

/** Whether a user holds the address, in `data` or `verified_data`. */
export const holdsAddress = (user: { data: ProfileData; verified_data: VerifiedData }, kind: AddressKind, value: string): boolean =>
  addressesOf(user.data, user.verified_data).some(([held, address]) => held === kind && address === normalizeAddress(kind, value));
