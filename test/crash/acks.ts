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
