/** Profile-shaped data for seeding and for the ceiling's fixed answer. */

export function seedProfile(n: number): { data: Record<string, unknown>; attributes: Record<string, string[]> } {
  return {
    data: {
      email: `bench.user.${n}@example.com`,
      phone_number: `+1555${String(n).padStart(7, '0')}`,
      first_name: `First${n}`,
      last_name: `Last${n}`,
      locale: 'en-GB',
      timezone: 'Europe/London',
      plan: n % 3 === 0 ? 'pro' : 'free',
      newsletter: n % 2 === 0,
      score: n % 1000,
      company: 'Example Widgets Ltd',
      job_title: 'Staff Engineer',
    },
    attributes: { 'bench:cohort': [`c${n % 16}`] },
  };
}

/**
 * A profile write as an application sends one: the user's whole `data` back with `changes` made, as a
 * wrk body template (`{email}` and `{phone}` come from the user's pools, so no address changes).
 */
export function profileWriteBody(changes: Record<string, unknown>): string {
  const { data } = seedProfile(0);
  return JSON.stringify({ data: { ...data, email: '{email}', phone_number: '{phone}', ...changes } });
}

/** About the size of a seeded profile as the service answers it (~600 bytes). */
export function ceilingBody(): string {
  const { data, attributes } = seedProfile(123456);
  return JSON.stringify({
    svc_user: 'user_01JD3M6ZC3Q5V9X8W7Y6T5R4S3',
    state: 'enabled',
    auth_level: 'unverified',
    data: { user_id: 'user_01JD3M6ZC3Q5V9X8W7Y6T5R4S3', ...data },
    verified_data: {},
    attributes,
    meta: { created: '2026-11-22T02:00:00.000Z', modified: '2026-11-22T02:00:00.000Z' },
    groups: [],
    connection_map: {},
  });
}
