import { foldForSearch } from '../search-fold.js';

/**
 * The roll's order: each registration's attendees together, in the order the family gave them, and the families
 * by the surname of their contact (the name the registration is filed under, and the one the printed roll shows
 * beside every line), then the contact's whole name, then the time they registered. The surname is the name's last
 * word, accents and case folded as the search folds them ("de la Cruz" is filed under Cruz); a one-word name is
 * its own surname.
 */
export function surnameOf(name: string): string {
  const words = name.trim().split(/\s+/).filter((word) => word !== '');
  return words.at(-1) ?? '';
}

export interface FamilySortable {
  id: string;
  contactName: string;
  registeredAt: Date;
}

export function compareFamilies(a: FamilySortable, b: FamilySortable): number {
  return (
    foldForSearch(surnameOf(a.contactName)).localeCompare(foldForSearch(surnameOf(b.contactName))) ||
    foldForSearch(a.contactName).localeCompare(foldForSearch(b.contactName)) ||
    a.registeredAt.getTime() - b.registeredAt.getTime() ||
    a.id.localeCompare(b.id)
  );
}

/** Consecutive attendees of one registration, as the roll lists them. */
export function groupByFamily<T extends { registrationId: string }>(attendees: readonly T[]): T[][] {
  const families: T[][] = [];
  for (const attendee of attendees) {
    const last = families.at(-1);
    if (last && last[0]?.registrationId === attendee.registrationId) last.push(attendee);
    else families.push([attendee]);
  }
  return families;
}
