import t from 'tap';
import { CreationStamps } from '../../../src/features/users/creation-stamps.js';

t.test('a user made again is stamped past every deleted user of its ID the clock has not passed', async (t) => {
  const stamps = new CreationStamps();
  t.equal(stamps.stampFor('a', 100), 100, 'nothing deleted: the clock');
  stamps.deletedAt('a', 100, 100);
  stamps.deletedAt('a', 101, 100);
  t.equal(stamps.stampFor('a', 100), 102, 'past both instants');
  t.equal(stamps.stampFor('b', 100), 100, 'another ID is not moved');
  t.equal(stamps.stampFor('a', 101), 102);
  t.equal(stamps.stampFor('a', 102), 102, 'once the clock has passed them, the clock again');
  stamps.deletedAt('a', 50, 102);
  t.equal(stamps.stampFor('a', 50), 50, 'a user made before the clock read is not kept: the clock is past it');
});

t.test('a clock stepped back keeps the instants ahead of it until it passes them, for at most 1 024 IDs', async (t) => {
  const stamps = new CreationStamps();
  const later = 3_600_000;
  for (let i = 0; i < 1100; i++) stamps.deletedAt(`u${i}`, later, 0);
  t.equal(stamps.stampFor('u0', later), later + 1, 'the first kept');
  t.equal(stamps.stampFor('u1023', later), later + 1, 'up to the 1 024th');
  t.equal(stamps.stampFor('u1024', later), later, 'past it, not kept');
  stamps.deletedAt('u0', later + 5, 10);
  t.equal(stamps.stampFor('u0', later), later + 1, 'a kept ID takes more instants');
  t.equal(stamps.stampFor('u0', later + 5), later + 6);
  t.equal(stamps.stampFor('u0', later + 6), later + 6, 'all forgotten once passed');
  stamps.deletedAt('u1030', later + 7, later + 6);
  t.equal(stamps.stampFor('u1030', later + 7), later + 8, 'which makes room again');
});
