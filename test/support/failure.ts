/** Awaits a promise that must reject and returns the rejection, so its type and fields can be asserted. */
export async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}
