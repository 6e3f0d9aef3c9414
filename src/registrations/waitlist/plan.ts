/**
 * The order rule, as one pure function both the offer pass and the public seat count use, so what the
 * page sells and what the pass offers never disagree.
 *
 * Offers are made in order of joining, each only when enough places are free for the whole entry.
 * An entry that does not fit is passed over, and every offer made to an entry behind it counts one
 * skip; an entry skipped WAITLIST_SKIP_LIMIT times blocks everyone behind it until it is served (or
 * leaves), so a large family is never passed over for ever by smaller ones.
 */
export const WAITLIST_SKIP_LIMIT = 3;

/** A confirmed entry still waiting, in queue order. */
export interface QueuedEntry {
  id: string;
  places: number;
  skips: number;
  /** The ticket type it waits for; null or absent: any. */
  tier?: string | null;
}

export interface OfferStep {
  offer: QueuedEntry;
  /** Entries ahead of it passed over for this offer: each gains one skip. */
  passedOver: QueuedEntry[];
}

export interface OfferPlan {
  steps: OfferStep[];
  /** Free places left once the offers are made. */
  left: number;
  /** The entry at the skip limit the pass stopped at: it does not fit, and it blocks those behind it. */
  blockedBy?: QueuedEntry;
  /**
   * Of `left`, the places the list keeps: held for `blockedBy` while an entry behind it would fit them
   * (the order rule gives them to the blocked family first). The rest no confirmed entry can take under
   * the order rule, so they go back on public sale.
   */
  heldForBlocked: number;
}

/**
 * What the pass would offer from `free` places (Infinity = no capacity), without changing anything.
 * `tierFree`: the free places of each ticket type with a capacity of its own. An entry waiting for such a
 * type is offered only when its places fit that type's too; while they do not, it waits for its type's
 * places, in order among the entries waiting for that type (none behind it takes them first), without a
 * skip and without blocking anyone else: nobody waiting for another type (or any) could take what it
 * waits for. An entry waiting for any type is offered event places and chooses its tickets when it
 * registers, within each type's room then.
 */
export function planOffers(free: number, queue: readonly QueuedEntry[], tierFree: ReadonlyMap<string, number> = new Map()): OfferPlan {
  const skips = new Map(queue.map((entry) => [entry.id, entry.skips]));
  const steps: OfferStep[] = [];
  const offered = new Set<string>();
  const passed: QueuedEntry[] = [];
  const tierLeft = new Map(tierFree);
  const tiersWaiting = new Set<string>();
  let left = free;
  let blockedBy: QueuedEntry | undefined;
  for (const entry of queue) {
    if (left <= 0) break;
    const tier = entry.tier ?? undefined;
    if (tier !== undefined && tierLeft.has(tier) && (tiersWaiting.has(tier) || entry.places > (tierLeft.get(tier) ?? 0))) {
      tiersWaiting.add(tier);
      continue;
    }
    if (entry.places > left) {
      if ((skips.get(entry.id) ?? 0) >= WAITLIST_SKIP_LIMIT) {
        blockedBy = entry;
        break;
      }
      passed.push(entry);
      continue;
    }
    steps.push({ offer: entry, passedOver: [...passed] });
    offered.add(entry.id);
    left -= entry.places;
    if (tier !== undefined && tierLeft.has(tier)) tierLeft.set(tier, (tierLeft.get(tier) ?? 0) - entry.places);
    for (const skipped of passed) skips.set(skipped.id, (skips.get(skipped.id) ?? 0) + 1);
    blockedBy = passed.find((skipped) => (skips.get(skipped.id) ?? 0) >= WAITLIST_SKIP_LIMIT);
    if (blockedBy) break;
  }
  let heldForBlocked = 0;
  if (blockedBy && left > 0 && Number.isFinite(left)) {
    const behind = queue.slice(queue.indexOf(blockedBy) + 1);
    if (behind.some((entry) => !offered.has(entry.id) && entry.places <= left)) heldForBlocked = left;
  }
  return { steps, left, blockedBy, heldForBlocked };
}

/** The free places of ticket type `tier` the list takes under the order rule: offered now to entries waiting for it. */
export function tierPlacesForList(plan: OfferPlan, tier: string): number {
  return plan.steps.filter((step) => step.offer.tier === tier).reduce((sum, step) => sum + step.offer.places, 0);
}

/** The free places the list may take under the order rule: offered now, or held for a blocking family. */
export function placesForList(plan: OfferPlan): number {
  return plan.steps.reduce((sum, step) => sum + step.offer.places, 0) + plan.heldForBlocked;
}
