import t from 'tap';
import { Gate } from '../../src/lib/gate.js';

t.test('a gate runs at most its limit of tasks at once, the others in the order they came, failed ones too', async (t) => {
  const gate = new Gate(2, 2, () => new Error('full'));
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

t.test('a gate refuses a task past its waiting limit without running it, and takes waiting tasks again once one has left', async (t) => {
  const gate = new Gate(1, 1, () => new Error('full'));
  const finish: (() => void)[] = [];
  const started: number[] = [];
  const task = (id: number) =>
    gate.run(async () => {
      started.push(id);
      await new Promise<void>((resolve) => finish.push(resolve));
      return id;
    });
  const running = task(1);
  const waiting = task(2);
  await t.rejects(task(3), { message: 'full' }, 'one running, one waiting: the third is refused');
  await new Promise((resolve) => setImmediate(resolve));
  t.same(started, [1], 'the refused task never ran');
  finish[0]!();
  t.equal(await running, 1);
  await new Promise((resolve) => setImmediate(resolve));
  t.same(started, [1, 2], 'the waiting task runs');
  const next = task(4);
  await t.rejects(task(5), { message: 'full' });
  finish[1]!();
  await new Promise((resolve) => setImmediate(resolve));
  finish[2]!();
  t.same(await Promise.all([waiting, next]), [2, 4]);
  t.same(started, [1, 2, 4]);
});
