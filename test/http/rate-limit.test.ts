import t from 'tap';
import { RateLimiter } from '../../src/http/rate-limit.js';
import { manualClock } from '../../src/lib/clock.js';

t.test('a bucket allows its burst, then refuses with Retry-After until it refills', async (t) => {
  const clock = manualClock();
  const limiter = new RateLimiter({ perSecond: 2, burst: 3 }, clock);
  for (let i = 0; i < 3; i++) limiter.take('a');
  t.throws(() => limiter.take('a'), { status: 429, code: 'E_RATE_LIMITED', headers: { 'retry-after': '1' } });
  limiter.take('b');
  clock.advance(500);
  limiter.take('a');
  t.throws(() => limiter.take('a'), { status: 429, code: 'E_RATE_LIMITED' });
});

t.test('a zero rate turns the limit off', async (t) => {
  const limiter = new RateLimiter({ perSecond: 0, burst: 0 }, manualClock());
  t.equal(limiter.enabled, false);
  for (let i = 0; i < 1000; i++) limiter.take('a');
  t.pass('never refused');
});

t.test('Retry-After rounds the wait up to whole seconds', async (t) => {
  const clock = manualClock();
  const limiter = new RateLimiter({ perSecond: 0.25, burst: 1 }, clock);
  limiter.take('a');
  t.throws(() => limiter.take('a'), { code: 'E_RATE_LIMITED', headers: { 'retry-after': '4' } });
});
