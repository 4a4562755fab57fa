/**
 * Balances are locked in key order by every statement that moves money, but a statement that
 * creates a balance's row (its foreign key share-locks the merchant) can still meet another in a
 * circle: PostgreSQL then ends one of the two (40P01, deadlock detected), which changed nothing,
 * and it is run again.
 */
export async function retryDeadlock<T>(run: () => Promise<T>, tries = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if ((err as { code?: unknown }).code !== '40P01' || attempt >= tries) throw err;
    }
  }
}
