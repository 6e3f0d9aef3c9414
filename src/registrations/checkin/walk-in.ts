/** Who checked in a walk-in registered by `registrations add --at-door` (in its transaction: see add.ts). */
export function atDoorLabel(actor: string): string {
  return `at the door (${actor})`;
}
