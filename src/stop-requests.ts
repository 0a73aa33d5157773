/**
 * Signals that ask the server to stop: SIGHUP too, which a closing terminal or a supervisor sends, and
 * whose default (an end at once) would cut the requests in flight.
 */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/**
 * The stops asked of this process, heard from its creation on. Listening from the start keeps a stop
 * that comes between one listener's removal and the next one's arrival (a start's steps handing over)
 * from being lost: Node drops a signal caught just before its last listener is removed. A stop asked
 * again, whenever it comes, is an operator who will not wait: it goes to `forced` (a second Ctrl+C).
 */
export class StopRequests {
  private first?: NodeJS.Signals;
  private readonly listeners = new Set<(signal: NodeJS.Signals) => void>();

  constructor(private readonly forced: (signal: NodeJS.Signals) => void) {
    for (const signal of STOP_SIGNALS) process.on(signal, () => this.ask(signal));
  }

  /** Calls `listener` on the stop, at once if it was asked already; answers its removal. */
  onStop(listener: (signal: NodeJS.Signals) => void): () => void {
    this.listeners.add(listener);
    if (this.first) listener(this.first);
    return () => this.listeners.delete(listener);
  }

  private ask(signal: NodeJS.Signals): void {
    if (this.first) return this.forced(signal);
    this.first = signal;
    for (const listener of [...this.listeners]) listener(signal);
  }
}
