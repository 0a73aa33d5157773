import t from 'tap';
import { Gate } from '../../src/lib/gate.js';

t.test('a gate runs at most its limit of tasks at once, the others in the order they came, failed ones too', async (t) => {
  const gate = new Gate(2);
  const started: number[] = [];
  const finish: (() => void)[] = [];
  const task = (id: number, fails = false) =>
    gate.run(async () => {
      started.push(id);
      await new Promise<void>((resolve) => finish.push(resolve));
      if (fails) throw new Error(`task ${id} failed`);
      return id;
    });
  const runs = [task(1, true), task(2), task(3), task(4)];
  const settled = Promise.allSettled(runs);
  await new Promise((resolve) => setImmediate(resolve));
  t.same(started, [1, 2], 'two at once');
  finish[0]!();
  await new Promise((resolve) => setImmediate(resolve));
  t.same(started, [1, 2, 3], 'a failed task hands its place on');
  finish[1]!();
  await new Promise((resolve) => setImmediate(resolve));
  t.same(started, [1, 2, 3, 4]);
  finish[2]!();
  finish[3]!();
  t.match(await settled, [{ status: 'rejected' }, { value: 2 }, { value: 3 }, { value: 4 }]);
  const again = Promise.all([task(5), task(6)]);
  await new Promise((resolve) => setImmediate(resolve));
  t.same(started.slice(4), [5, 6], 'both places are free again');
  finish[4]!();
  finish[5]!();
  t.same(await again, [5, 6]);
});
