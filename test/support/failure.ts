/** The error a call throws; fails the test when it does not throw. */
export async function failure(f: () => unknown): Promise<any> {
  try {
    await f()
  } catch (e) {
    return e
  }
  throw new Error('expected the call to fail')
}
