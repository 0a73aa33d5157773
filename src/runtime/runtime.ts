import { createActor, type AnyActorRef, type AnyMachineSnapshot } from 'xstate';
import type { Logger } from 'pino';
import { ApiError, invalidTransition, notFound, storageFailure, unavailable } from '../lib/errors.js';
import type { Clock } from '../lib/clock.js';
import type { Database, Key, Store } from '../storage/store.js';
import { readPage, type PageRequest } from '../storage/paging.js';
import { KeyLocks } from './locks.js';
import type { MachineRegistry } from './machines.js';

/** What a snapshot says, as read models and services use it. */
export interface ActorView<C> {
  state: string;
  context: C;
}

/** A persisted snapshot with the version of the machine that wrote it. */
export interface StoredSnapshot {
  v: number;
  snapshot: any;
  /** The bytes it was stored in, where its store tells: what a resident actor is weighed by. */
  bytes?: number;
}

/**
 * Where a kind's snapshots are kept. By default each kind has a msgpack table of its own; a kind
 * may keep them elsewhere (users keep theirs in their profile records: one value per user).
 */
export interface SnapshotStore {
  get(key: Key[]): StoredSnapshot | undefined;
  doesExist(key: Key[]): boolean;
  /**
   * Stores the actor's `snapshot`; runs inside the write transaction. Answers the bytes stored where
   * the store tells (a kind whose records can be large must: see `maxActorBytes`).
   */
  put(key: Key[], snapshot: AnyMachineSnapshot): number | undefined;
  remove(key: Key[]): void;
}

interface Resident {
  kind: string;
  key: Key[];
  actor: AnyActorRef;
  lastUsed: number;
  /** Its stored size, 0 where its store does not tell. */
  bytes: number;
}

export interface Event {
  type: string;
}

/**
 * One unit of work: reads, events to actors and index writes, committed together in one LMDB
 * transaction before the caller hears of it. The body is synchronous so nothing interleaves with it.
 */
export interface Turn {
  readonly now: number;
  get<C>(kind: string, key: Key[]): ActorView<C> | undefined;
  /** Starts a new actor from its machine's initial state with `input`. */
  create<C>(kind: string, key: Key[], input: unknown): ActorView<C>;
  /** Delivers `event`; 409 `E_INVALID_STATE_TRANSITION` when the machine refuses it. */
  send<C>(kind: string, key: Key[], event: Event): ActorView<C>;
  remove(kind: string, key: Key[]): void;
  put(db: Database<any, Key>, key: Key, value: unknown): void;
  del(db: Database<any, Key>, key: Key): void;
  /** Adds `delta` to a counter in the same transaction. */
  count(key: Key, delta: number): void;
  /** Runs inside the write transaction after the staged writes: for read models derived from them. */
  derive(write: () => void): void;
  /** Runs after a successful commit: effects such as sending mail. */
  afterCommit(effect: () => void): void;
  /**
   * New records' IDs from `draw`, whose locks (`keysOf`) the turn holds from now to its end. Drawn inside
   * the turn, after its wait, those IDs sort after every record committed before it: lists page by ID.
   * It never waits: keys some turn holds or waits for (an ID guessed by a request) are drawn again.
   */
  lockNew<T>(draw: () => T, keysOf: (drawn: T) => readonly string[]): T;
  /** Whether the turn holds the lock of `key`. */
  holds(key: string): boolean;
}

/** Draws of `lockNew` before it gives up: only a request naming the very next IDs takes one. */
const NEW_KEY_DRAWS = 8;

export interface RuntimeOptions {
  store: Store;
  machines: MachineRegistry;
  clock: Clock;
  logger: Logger;
  maxActors: number;
  /**
   * The stored bytes of the resident actors together before the least recently used idle ones are
   * passivated: a profile near its 4 MiB cap holds tens of MB of heap once resident, so a count alone
   * does not bound the memory.
   */
  maxActorBytes: number;
  idleMs: number;
  /** Kinds whose snapshots are not kept in a table of their own (see `SnapshotStore`). */
  snapshotStores?: Readonly<Record<string, SnapshotStore>>;
  /** Idle actors passivated per event-loop turn (default `PASSIVATION_SLICE`). */
  passivationSlice?: number;
}

/**
 * Passivating an actor that must be stopped takes 8–16 µs here: the sweep after a burst of activity
 * could otherwise stop 10 000 in one turn and hold every request in flight for 80–160 ms.
 */
export const PASSIVATION_SLICE = 64;

export const actorLockKey = (kind: string, key: Key[]) => `${kind}:${key.join('\u0000')}`;

export class ActorRuntime {
  private readonly residents = new Map<string, Resident>();
  /** The `bytes` of every resident together. */
  private residentBytesTotal = 0;
  /** The last entry of `residents` when it is there (an evicted one is not: `use` finds it no more). */
  private newest?: Resident;
  private readonly locks = new KeyLocks();
  private readonly counters: Database<number, Key>;
  private readonly stores = new Map<string, SnapshotStore>();
  private sweepTimer?: NodeJS.Timeout;
  private sweepRest?: NodeJS.Immediate;

  constructor(private readonly options: RuntimeOptions) {
    this.counters = options.store.db<number>('counters');
    // Every table opened now: opening a named database the first time is a write, which a refused turn must not make.
    for (const kind in options.machines) this.stores.set(kind, options.snapshotStores?.[kind] ?? this.tableStore(kind));
    this.sweepTimer = setInterval(() => this.passivateIdle(), Math.max(1000, options.idleMs / 2));
    this.sweepTimer.unref();
  }

  /** The table of a kind that keeps its snapshots in one: `[…key] → {v, snapshot}`. */
  table(kind: string): Database<StoredSnapshot, Key> {
    if (this.options.snapshotStores?.[kind]) throw new TypeError(`Snapshots of ${kind} are not kept in a table`);
    return this.options.store.db<StoredSnapshot>(`actor:${kind}`);
  }

  private tableStore(kind: string): SnapshotStore {
    const table = this.table(kind);
    const def = this.options.machines[kind];
    return {
      get: (key) => table.get(key),
      doesExist: (key) => table.doesExist(key),
      // Unweighed: these kinds' records are small by their schemas' limits (a group's meta at most 16 KiB).
      put: (key, snapshot) => {
        table.put(key, { v: def.version, snapshot: def.machine.getPersistedSnapshot(snapshot) });
        return undefined;
      },
      remove: (key) => table.remove(key),
    };
  }

  private snapshots(kind: string): SnapshotStore {
    const store = this.stores.get(kind);
    if (!store) throw new TypeError(`No machine registered for actor kind ${kind}`);
    return store;
  }

  /** Committed view of an actor, read straight from LMDB without activating it. */
  read<C>(kind: string, key: Key[]): ActorView<C> | undefined {
    const stored = this.snapshots(kind).get(key);
    return stored ? viewOf<C>(this.upgrade(kind, stored)) : undefined;
  }

  /** Committed views of one page of a kind's table, from one range read: no get and decode per entry. */
  readPage<C>(kind: string, request: PageRequest): ActorView<C>[] {
    return readPage(this.table(kind), request).map(({ value }) => viewOf<C>(this.upgrade(kind, value)));
  }

  /** Whether the actor exists (committed), without reading it. */
  exists(kind: string, key: Key[]): boolean {
    return this.snapshots(kind).doesExist(key);
  }

  counter(key: Key): number {
    return this.counters.get(key) ?? 0;
  }

  get residentCount(): number {
    return this.residents.size;
  }

  get residentBytes(): number {
    return this.residentBytesTotal;
  }

  /**
   * Runs `body` holding the locks of `lockKeys` (use `actorLockKey` for actors, any string for
   * uniqueness rules), commits everything it staged in one transaction, then answers its result.
   * If anything fails, the actors it touched are dropped from memory and reload from disk.
   */
  async run<T>(lockKeys: readonly string[], body: (turn: Turn) => T): Promise<T> {
    const releases = [await this.locks.acquire(lockKeys)];
    const touched = new Set<string>();
    try {
      const writes: Array<() => void> = [];
      const derived: Array<() => void> = [];
      const effects: Array<() => void> = [];
      const turn = this.turn(new Set(lockKeys), releases, touched, writes, derived, effects);
      const result = body(turn);
      if (result instanceof Promise) throw new TypeError('A turn body must be synchronous');
      if (writes.length + derived.length > 0) {
        try {
          await this.options.store.commit(() => {
            for (const write of writes) write();
            for (const write of derived) write();
          });
        } catch (error) {
          // The store's own 503 names the storage's error; a write that threw is answered the same way: nothing was kept.
          throw error instanceof ApiError && error.code === 'E_UNAVAILABLE' ? error : storageFailure(error);
        }
      }
      for (const effect of effects) {
        try {
          effect();
        } catch (error) {
          this.options.logger.error({ err: error }, 'effect after commit failed');
        }
      }
      touched.clear();
      return result;
    } finally {
      for (const id of touched) this.evict(id);
      for (const release of releases) release();
      this.enforceCap();
    }
  }

  private turn(
    locked: Set<string>,
    releases: Array<() => void>,
    touched: Set<string>,
    writes: Array<() => void>,
    derived: Array<() => void>,
    effects: Array<() => void>,
  ): Turn {
    const now = this.options.clock.now();
    // Removed in this turn: gone for the rest of it, even though LMDB still holds them until the commit.
    const removed = new Set<string>();
    const requireLock = (kind: string, key: Key[]) => {
      const id = actorLockKey(kind, key);
      if (!locked.has(id)) throw new TypeError(`Turn touches ${id} without holding its lock`);
      return id;
    };
    const persist = (id: string, kind: string, key: Key[], resident: Resident) => {
      const snapshot = resident.actor.getSnapshot();
      const store = this.snapshots(kind);
      writes.push(() => this.weigh(id, resident, store.put(key, snapshot) ?? 0));
    };
    return {
      now,
      get: <C>(kind: string, key: Key[]) => {
        const id = actorLockKey(kind, key);
        // An actor this turn does not hold may be mid-commit elsewhere: read what is committed.
        if (!locked.has(id)) return this.read<C>(kind, key);
        if (removed.has(id)) return undefined;
        const resident = this.use(id, kind, key, now);
        return resident ? viewOf<C>({ v: 0, snapshot: resident.actor.getSnapshot() }) : undefined;
      },
      create: <C>(kind: string, key: Key[], input: unknown) => {
        const id = requireLock(kind, key);
        if (this.residents.has(id) || (!removed.has(id) && this.exists(kind, key))) {
          throw new TypeError(`Actor ${id} already exists`);
        }
        removed.delete(id);
        touched.add(id);
        const actor = createActor(this.machineOf(kind), { input }).start();
        const resident: Resident = { kind, key, actor, lastUsed: now, bytes: 0 };
        this.makeNewest(id, resident);
        persist(id, kind, key, resident);
        return viewOf<C>({ v: 0, snapshot: actor.getSnapshot() });
      },
      send: <C>(kind: string, key: Key[], event: Event) => {
        const id = requireLock(kind, key);
        const resident = removed.has(id) ? undefined : this.use(id, kind, key, now);
        if (!resident) throw notFound(kind, String(key[key.length - 1]));
        const before = resident.actor.getSnapshot();
        if (!before.can(event)) throw invalidTransition(stateName(before.value), event.type);
        touched.add(id);
        resident.actor.send(event);
        persist(id, kind, key, resident);
        return viewOf<C>({ v: 0, snapshot: resident.actor.getSnapshot() });
      },
      remove: (kind: string, key: Key[]) => {
        const id = requireLock(kind, key);
        // A removed actor must not stay resident, or later turns would still find it.
        this.evict(id);
        removed.add(id);
        const store = this.snapshots(kind);
        writes.push(() => store.remove(key));
      },
      put: (db, key, value) => writes.push(() => db.put(key, value)),
      del: (db, key) => writes.push(() => db.remove(key)),
      count: (key, delta) =>
        writes.push(() => {
          const current = this.counters.get(key) ?? 0;
          this.counters.put(key, current + delta);
        }),
      derive: (write) => derived.push(write),
      afterCommit: (effect) => effects.push(effect),
      lockNew: (draw, keysOf) => {
        for (let attempt = 0; attempt < NEW_KEY_DRAWS; attempt++) {
          const drawn = draw();
          const keys = keysOf(drawn);
          const release = this.locks.tryAcquire(keys);
          if (!release) continue;
          releases.push(release);
          for (const key of keys) locked.add(key);
          return drawn;
        }
        throw unavailable('No free ID could be drawn; try again');
      },
      holds: (key) => locked.has(key),
    };
  }

  private machineOf(kind: string) {
    const def = this.options.machines[kind];
    if (!def) throw new TypeError(`No machine registered for actor kind ${kind}`);
    return def.machine;
  }

  private upgrade(kind: string, stored: StoredSnapshot): StoredSnapshot {
    const def = this.options.machines[kind];
    if (!def || stored.v === def.version) return stored;
    if (!def.upgrade) throw new Error(`Snapshot of ${kind} is version ${stored.v}; no upgrade to ${def.version}`);
    return { v: def.version, snapshot: def.upgrade(stored.snapshot, stored.v) };
  }

  /**
   * The actor, activated if need be, marked used at `now`: a turn that only reads it uses it too. Map
   * order is then recency order, which the cap passivates from the front.
   */
  private use(id: string, kind: string, key: Key[], now: number): Resident | undefined {
    const resident = this.residents.get(id) ?? this.activate(kind, key, now);
    if (!resident) return undefined;
    resident.lastUsed = now;
    // A turn's second look at its actor (a write's send after its read) finds it at the end already.
    if (resident !== this.newest) this.makeNewest(id, resident);
    return resident;
  }

  /** Puts `resident` at the end of the map, recency order's, and remembers it as there. */
  private makeNewest(id: string, resident: Resident): void {
    if (!this.residents.delete(id)) this.residentBytesTotal += resident.bytes;
    this.residents.set(id, resident);
    this.newest = resident;
  }

  /** Gives `resident` its new stored size, unless it is no longer resident (removed later in its turn). */
  private weigh(id: string, resident: Resident, bytes: number): void {
    if (this.residents.get(id) !== resident) return;
    this.residentBytesTotal += bytes - resident.bytes;
    resident.bytes = bytes;
  }

  private activate(kind: string, key: Key[], now: number): Resident | undefined {
    const stored = this.snapshots(kind).get(key);
    if (!stored) return undefined;
    const { snapshot } = this.upgrade(kind, stored);
    const actor = createActor(this.machineOf(kind), { snapshot }).start();
    return { kind, key, actor, lastUsed: now, bytes: stored.bytes ?? 0 };
  }

  private evict(id: string): void {
    const resident = this.residents.get(id);
    if (!resident) return;
    if (!holdsOnlyItsSnapshot(resident.actor)) resident.actor.stop();
    this.residents.delete(id);
    this.residentBytesTotal -= resident.bytes;
  }

  private overCap(): boolean {
    return this.residents.size > this.options.maxActors || this.residentBytesTotal > this.options.maxActorBytes;
  }

  /** Passivates the least recently used idle actors while over either cap (Map order is recency order, see `use`). */
  private enforceCap(): void {
    if (!this.overCap()) return;
    for (const [id] of this.residents) {
      if (!this.overCap()) break;
      if (!this.locks.isHeld(id)) this.evict(id);
    }
  }

  /**
   * Passivates the actors idle for `idleMs`, a slice per event-loop turn so requests are answered in
   * between. The walk ends at the first actor used since the cutoff: Map order is recency order, so
   * the rest were used later (a clock stepped back only delays theirs), and a large resident set is
   * not walked whole every sweep.
   */
  passivateIdle(): void {
    // A call while the rest of a sweep waits takes its place.
    if (this.sweepRest) clearImmediate(this.sweepRest);
    this.sweepRest = undefined;
    const cutoff = this.options.clock.now() - this.options.idleMs;
    const slice = this.options.passivationSlice ?? PASSIVATION_SLICE;
    let evicted = 0;
    for (const [id, resident] of this.residents) {
      if (resident.lastUsed > cutoff) return;
      if (this.locks.isHeld(id)) continue;
      this.evict(id);
      if (++evicted < slice) continue;
      this.sweepRest = setImmediate(() => this.passivateIdle());
      return;
    }
  }

  stop(): void {
    clearInterval(this.sweepTimer);
    if (this.sweepRest) clearImmediate(this.sweepRest);
    for (const id of [...this.residents.keys()]) this.evict(id);
  }
}

/**
 * Whether passivating `actor` is forgetting it: with no children and no delayed events it holds
 * nothing LMDB does not. Stopping an XState actor takes 8–16 µs here, which every write would pay
 * once the resident set is full (1M users: each activation passivates another actor).
 */
function holdsOnlyItsSnapshot(actor: AnyActorRef): boolean {
  const { children } = actor.getSnapshot();
  return Object.keys(children).length === 0 && Object.keys(actor.system.getSnapshot()._scheduledEvents).length === 0;
}

function stateName(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function viewOf<C>(stored: StoredSnapshot): ActorView<C> {
  return { state: stateName(stored.snapshot.value), context: stored.snapshot.context as C };
}
