/**
 * Runs the steps of a write after its first acknowledged one; each records in the ack what it reached.
 * A kill midway fails the request in flight, and what was acknowledged so far stands.
 */
export async function untilKilled(steps: () => Promise<void>): Promise<void> {
  try {
    await steps();
  } catch {
    // Killed midway: the ack says what was acknowledged before.
  }
}

/** The acks that `isLost` finds missing after the restart, asked one at a time. */
export async function lostAmong<Ack>(acks: Ack[], isLost: (ack: Ack) => Promise<boolean>): Promise<Ack[]> {
  const lost: Ack[] = [];
  for (const ack of acks) if (await isLost(ack)) lost.push(ack);
  return lost;
}
