import { z } from 'zod';
import { contactEmail, contactMobile } from '../../../contact-rules.js';
import { personName } from '../../../name-rules.js';
import { noteSchema } from './shared.js';
import { calendarDate } from '../../../office/event-file.js';

/**
 * The options of `registrations add`. The contact and every attendee are held to the public form's
 * rules (contact-rules, name-rules): what the office types by hand is what the form would accept.
 * Its own module, imported by the action: the name rules build a large pattern of web domains.
 */

const attendeeName = personName('enter a name');

// Shown as typed, except characters that would act on the terminal or not show: those as \u{…}.
const shown = (value: string) => `"${value.replace(/[\p{Cc}\p{Cf}]/gu, (c) => `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`)}"`;

export const addOptionsSchema = z.object({
  event: z.string({ error: 'is required' }).trim().min(1, { error: 'must not be empty' }),
  name: personName('must not be empty'),
  email: contactEmail('must not be empty'),
  // "" is no mobile, as on the form.
  mobile: contactMobile('must be a phone number')
    .optional()
    .transform((value) => (value ? value : undefined)),
  attendee: z
    .array(z.string())
    .min(1, { error: 'is required at least once, e.g. --attendee "Sam Smith:adult"' })
    .transform((values, ctx) =>
      values.map((value) => {
        const at = value.lastIndexOf(':');
        const tier = at > 0 ? value.slice(at + 1).trim() : '';
        const name = attendeeName.safeParse(at > 0 ? value.slice(0, at) : '');
        if (at <= 0 || !tier) ctx.addIssue({ code: 'custom', message: `${shown(value)} must be "Name:tier"` });
        else if (!name.success) ctx.addIssue({ code: 'custom', message: `${shown(value)} name: ${name.error.issues[0]?.message ?? 'enter a name'}` });
        return { name: name.success ? name.data : '', tier };
      }),
    ),
  family: z.boolean().optional(),
  // Unset: card when --resolve-alert names a card payment, else none.
  paid: z.enum(['bank', 'cash', 'card', 'none'], { error: 'must be bank, cash, card or none' }).optional(),
  overCapacity: z.boolean().optional(),
  resolveAlert: z.coerce.number({ error: 'must be an alert id' }).int().positive().optional(),
  note: noteSchema,
  atDoor: z.boolean().optional(),
  priceAt: calendarDate.optional(),
  code: z.string().trim().min(1, { error: 'must not be empty' }).max(40, { error: 'at most 40 characters' }).optional(),
  addon: z.array(z.string()).optional(),
  json: z.boolean().optional(),
});
