import t from 'tap';
import { RateLimiter, type RateLimit } from '../../src/http/rate-limit.js';
import { manualClock } from '../../src/lib/clock.js';
import { limitByIp } from '../../src/auth/rate-limited-steps.js';
import { requireAdminToken } from '../../src/auth/admin-auth.js';
import type { RequestContext } from '../../src/http/context.js';

/** A request whose client address counts its reads (uWS hands it out in a new ArrayBuffer per read). */
function request(authorization?: string) {
  const reads = { ip: 0 };
  const ctx = {
    header: (name: string) => (name === 'authorization' ? authorization : undefined),
    get ip() {
      reads.ip++;
      return '203.0.113.7';
    },
  } as unknown as RequestContext;
  return { ctx, reads };
}

const OFF: RateLimit = { perSecond: 0, burst: 0 };
const ON: RateLimit = { perSecond: 1, burst: 1 };

t.test("the per-IP step reads the client's address only with its limit on", async (t) => {
  const off = request();
  await limitByIp(new RateLimiter(OFF, manualClock()), 0)(off.ctx);
  t.equal(off.reads.ip, 0);
  const on = request();
  await limitByIp(new RateLimiter(ON, manualClock()), 0)(on.ctx);
  t.equal(on.reads.ip, 1);
});

/** What a step answered: `ok`, or the status it threw. */
async function outcome(run: () => unknown): Promise<'ok' | number> {
  try {
    await run();
    return 'ok';
  } catch (error) {
    return (error as { status: number }).status;
  }
}

t.test("the admin step reads the client's address only with its failure limit on", async (t) => {
  const token = 'admin-token-of-this-test';
  for (const [authorization, answer] of [[`Bearer ${token}`, 'ok'], ['Bearer wrong', 401]] as const) {
    for (const [limit, reads] of [[OFF, 0], [ON, 1]] as const) {
      const { ctx, reads: counted } = request(authorization);
      t.equal(await outcome(() => requireAdminToken(token, new RateLimiter(limit, manualClock()), 0)(ctx)), answer);
      t.equal(counted.ip, reads, `${authorization}, limit ${limit === ON ? 'on' : 'off'}: ${reads} address read`);
    }
  }
});
