/** The documented header of `eventops people import` (decisions.md, "Admin interface"). */
export const PEOPLE_CSV_COLUMNS = [
  'first_name',
  'last_name',
  'email',
  'mobile',
  'birth_date',
  'wedding_date',
  'spouse_email',
  'ministry_role',
  'clearance_kind',
  'clearance_number',
  'clearance_expires',
] as const;

export type PeopleCsvColumn = (typeof PEOPLE_CSV_COLUMNS)[number];
