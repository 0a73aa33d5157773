/**
 * Per-key FIFO locks: a turn waits until every key it names is free. All keys of one turn are taken
 * in the same tick, so two turns can never each hold a part of the other's set.
 */
export class KeyLocks {
  private readonly tails = new Map<string, Promise<void>>();

  async acquire(keys: readonly string[]): Promise<() => void> {
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const waits: Promise<void>[] = [];
    const unique = [...new Set(keys)];
    for (const key of unique) {
      const tail = this.tails.get(key);
      if (tail) waits.push(tail);
      this.tails.set(key, done);
    }
    if (waits.length > 0) await Promise.all(waits);
    return () => {
      release();
      for (const key of unique) if (this.tails.get(key) === done) this.tails.delete(key);
    };
  }

  isHeld(key: string): boolean {
    return this.tails.has(key);
  }
}
