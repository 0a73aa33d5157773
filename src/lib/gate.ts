/**
 * Runs at most `limit` tasks at once; up to `waitingLimit` others wait their turn, first come first
 * served, and a task past them is refused with `full()` without running.
 */
export class Gate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly limit: number,
    private readonly waitingLimit: number,
    private readonly full: () => Error,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running < this.limit) this.running++;
    else if (this.waiting.length < this.waitingLimit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else throw this.full();
    try {
      return await task();
    } finally {
      // A waiting task takes this one's place: `running` stays as it is.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
