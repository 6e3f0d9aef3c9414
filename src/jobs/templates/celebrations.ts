import { defineEmailTemplate } from '../../mail/render.js';

export interface BirthdayEmailData {
  firstName: string;
}

export interface AnniversaryEmailData {
  /** "Tom and Lan", or one first name when the spouse is not on record. */
  greeting: string;
  /** "30 years", "1 year". */
  yearsMarried: string;
  /** "30th". */
  yearsOrdinal: string;
}

/** Birthday greeting; the person's age is deliberately never shown. */
export const birthdayEmail = defineEmailTemplate<BirthdayEmailData>({
  subject: 'Happy birthday, {{firstName}}!',
  heading: 'Happy birthday, {{firstName}}!',
  html: `<p>Dear {{firstName}},</p>
<p>Everyone at {{church.name}} wishes you a very happy birthday. We are thankful for you and pray that the year ahead is full of joy and blessing.</p>
<p>With love,<br>{{church.name}}</p>`,
  text: `Dear {{firstName}},

Everyone at {{church.name}} wishes you a very happy birthday. We are thankful for you and pray that the year ahead is full of joy and blessing.

With love,
{{church.name}}`,
});

/** One email to the couple (both addresses, when both are on record). */
export const anniversaryEmail = defineEmailTemplate<AnniversaryEmailData>({
  subject: 'Happy {{yearsOrdinal}} wedding anniversary, {{greeting}}!',
  heading: 'Happy anniversary, {{greeting}}!',
  html: `<p>Dear {{greeting}},</p>
<p>Congratulations on {{yearsMarried}} of marriage! Everyone at {{church.name}} celebrates with you today and prays God's blessing on the years ahead.</p>
<p>With love,<br>{{church.name}}</p>`,
  text: `Dear {{greeting}},

Congratulations on {{yearsMarried}} of marriage! Everyone at {{church.name}} celebrates with you today and prays God's blessing on the years ahead.

With love,
{{church.name}}`,
});

const ORDINAL_SUFFIX: Record<Intl.LDMLPluralRule, string> = { one: 'st', two: 'nd', few: 'rd', other: 'th', zero: 'th', many: 'th' };
const englishOrdinals = new Intl.PluralRules('en', { type: 'ordinal' });

/** 1 → "1st", 22 → "22nd", 30 → "30th" (the emails are written in English). */
export function ordinal(n: number): string {
  return `${n}${ORDINAL_SUFFIX[englishOrdinals.select(n)]}`;
}
