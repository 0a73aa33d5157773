/**
 * Per-key FIFO locks: a turn waits until every key it names is free. All keys of one turn are taken
 * in the same tick, so two turns can never each hold a part of the other's set.
 */
export class KeyLocks {
  private readonly tails = new Map<string, Promise<void>>();

  async acquire(keys: readonly string[]): Promise<() => void> {
    const unique = [...new Set(keys)];
    const waits: Promise<void>[] = [];
    for (const key of unique) {
      const tail = this.tails.get(key);
      if (tail) waits.push(tail);
    }
    const release = this.take(unique);
    if (waits.length > 0) await Promise.all(waits);
    return release;
  }

  /** Makes this holder the tail of every key in `unique`, answering its release. */
  private take(unique: readonly string[]): () => void {
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    for (const key of unique) this.tails.set(key, done);
    return () => {
      release();
      for (const key of unique) if (this.tails.get(key) === done) this.tails.delete(key);
    };
  }

  /** Takes `keys` at once if no one holds or waits for any of them, answering the release; else nothing. */
  tryAcquire(keys: readonly string[]): (() => void) | undefined {
    if (keys.some((key) => this.tails.has(key))) return undefined;
    return this.take([...new Set(keys)]);
  }

  isHeld(key: string): boolean {
    return this.tails.has(key);
  }
}
