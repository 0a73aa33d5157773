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

t.test('a caller rotating keys cannot reset a drained bucket by filling the map, and the map stays bounded', async (t) => {
  const clock = manualClock();
  const limiter = new RateLimiter({ perSecond: 1, burst: 60 }, clock);
  limiter.take('idle');
  clock.advance(1000);
  for (let i = 0; i < 60; i++) limiter.take('victim');
  t.throws(() => limiter.take('victim'), { code: 'E_RATE_LIMITED' });
  for (let i = 0; i < 250_000; i++) limiter.take(`rotating-${i}`);
  const buckets = (limiter as unknown as { buckets: Map<string, unknown> }).buckets;
  t.ok(buckets.size <= 100_000, `at most 100 000 buckets (${buckets.size})`);
  t.notOk(buckets.has('idle'), 'an idle full bucket is dropped first');
  t.throws(() => limiter.take('victim'), { code: 'E_RATE_LIMITED' }, 'the drained bucket is still drained');
});

t.test('a fractional rate lets through a caller that waited its Retry-After, asking on the way', async (t) => {
  const clock = manualClock();
  const limiter = new RateLimiter({ perSecond: 0.1, burst: 1 }, clock);
  limiter.take('a');
  for (let second = 1; second < 10; second++) {
    clock.advance(1000);
    t.throws(() => limiter.take('a'), { code: 'E_RATE_LIMITED', headers: { 'retry-after': String(10 - second) } }, `at ${second} s`);
  }
  clock.advance(1000);
  t.doesNotThrow(() => limiter.take('a'), 'ten refills of 0.1 make a token');
});

t.test('refuseIfSpent refuses as take would, takes nothing and keeps no bucket for an unknown caller', async (t) => {
  const clock = manualClock();
  const limiter = new RateLimiter({ perSecond: 1, burst: 1 }, clock);
  for (let i = 0; i < 3; i++) limiter.refuseIfSpent('a');
  const buckets = (limiter as unknown as { buckets: Map<string, unknown> }).buckets;
  t.equal(buckets.size, 0, 'asking makes no bucket');
  limiter.take('a');
  t.throws(() => limiter.refuseIfSpent('a'), { status: 429, code: 'E_RATE_LIMITED', headers: { 'retry-after': '1' } });
  clock.advance(1000);
  limiter.refuseIfSpent('a');
  limiter.take('a');
  t.throws(() => limiter.take('a'), { code: 'E_RATE_LIMITED' }, 'refuseIfSpent took nothing: one token had refilled');
});
