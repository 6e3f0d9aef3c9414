/**
 * Runs `fn` over `items` with at most `concurrency` in flight (the SMTP pool's
 * size), collecting every outcome instead of stopping at the first failure.
 */
export async function eachLimited<T, R>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<Array<{ item: T; ok: true; value: R } | { item: T; ok: false; error: unknown }>> {
  const results: Array<{ item: T; ok: true; value: R } | { item: T; ok: false; error: unknown }> = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      const item = items[index] as T;
      try {
        results[index] = { item, ok: true, value: await fn(item, index) };
      } catch (error) {
        results[index] = { item, ok: false, error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker));
  return results;
}
