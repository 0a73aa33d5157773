/** Users whose instants are kept at once: past it (a clock stepped back over many deletions) the rest are not. */
const MAX_USERS = 1024;

/**
 * The creation instants of users deleted while the clock still read no later than them (a user made,
 * signed in and deleted within one millisecond, or in a span a stepped-back clock reads again), by user
 * key. A user made again under that ID is stamped past each of them: its tokens name their user's
 * creation instant (`uct`), so two users of one ID must never share one. Kept in memory only: once the
 * clock has passed an instant no new user can be stamped with it, and a restart takes longer than a
 * millisecond.
 */
export class CreationStamps {
  private readonly deleted = new Map<string, Set<number>>();
  /** The earliest instant kept: nothing is forgotten before the clock passes it. */
  private earliest = Infinity;

  /** A user created at `createdAt` was deleted at `now`. */
  deletedAt(userKey: string, createdAt: number, now: number): void {
    this.forgetBefore(now);
    if (createdAt < now) return;
    const instants = this.deleted.get(userKey);
    if (instants) instants.add(createdAt);
    else if (this.deleted.size < MAX_USERS) this.deleted.set(userKey, new Set([createdAt]));
    else return;
    this.earliest = Math.min(this.earliest, createdAt);
  }

  /** The instant to stamp on a user made at `now`: `now`, or the next one no deleted user of its ID was made at. */
  stampFor(userKey: string, now: number): number {
    this.forgetBefore(now);
    const taken = this.deleted.get(userKey);
    let at = now;
    while (taken?.has(at)) at++;
    return at;
  }

  private forgetBefore(now: number): void {
    if (now <= this.earliest) return;
    this.earliest = Infinity;
    for (const [key, instants] of this.deleted) {
      for (const instant of instants) {
        if (instant < now) instants.delete(instant);
        else this.earliest = Math.min(this.earliest, instant);
      }
      if (instants.size === 0) this.deleted.delete(key);
    }
  }
}
