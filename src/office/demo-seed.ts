import { addDays, subDays } from 'date-fns';
import { formatInTimeZone } from 'date-fns-tz';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import { recordError } from '../ops/error-log.js';
import { setSetting } from '../settings.js';
import { createEvent, getEventBySlug } from './events.js';
import { parseEventFile } from './event-file.js';
import { importPeople } from './people-import.js';
import { addUser } from './users.js';

export const DEMO_EVENT_SLUG = 'demo-family-camp';

export interface DemoSeedResult {
  seeded: boolean;
  users: number;
  people: number;
  registrations: number;
}

/**
 * A realistic small church whose every job has something to do right now:
 * an event whose reminder is due with paid and pending bank-transfer
 * registrations, birthdays and an anniversary today, clearances missing,
 * expired and expiring, an abandoned checkout and a week of errors.
 * Loads once (keyed by the demo event); later calls change nothing.
 */
export async function seedDemoChurch(ctx: AppContext): Promise<DemoSeedResult> {
  if (ctx.config.isProduction) throw new AppError('demo_in_production', 'the demo church is never loaded in production');
  if (!ctx.config.allowDemoSeed) {
    throw new AppError('demo_seed_disabled', 'the demo seed creates users only with ALLOW_DEMO_SEED=true', {
      suggestion: 'run `eventops demo`, which sets it for its own run',
    });
  }
  if (await getEventBySlug(ctx.db, DEMO_EVENT_SLUG, { includeDeleted: true })) {
    return { seeded: false, users: 0, people: 0, registrations: 0 };
  }
  // One transaction: a seed that fails halfway leaves nothing, so the next run is not refused by its own users.
  return ctx.db.transaction((trx) => seed({ ...ctx, db: trx }));
}

const isLeapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/** The same day `years` before `today` (YYYY-MM-DD); 29 February becomes the 28th in a year without one. */
function yearsBefore(today: string, years: number): string {
  const year = Number(today.slice(0, 4)) - years;
  const monthDay = today.slice(5);
  return monthDay === '02-29' && !isLeapYear(year) ? `${year}-02-28` : `${year}-${monthDay}`;
}

async function seed(ctx: AppContext): Promise<DemoSeedResult> {
  const now = ctx.clock.now();
  const zone = ctx.config.regional.timeZone;
  const localDate = (date: Date) => formatInTimeZone(date, zone, 'yyyy-MM-dd');
  const today = localDate(now);
  const yearsAgo = (years: number) => yearsBefore(today, years);

  await addUser(ctx, { email: 'admin@demo.church.example', name: 'Dana Admin', role: 'ADMIN' });
  await addUser(ctx, { email: 'pastor@demo.church.example', name: 'Pat Pastor', role: 'PASTOR' });
  await addUser(ctx, { email: 'office@demo.church.example', name: 'Olive Office', role: 'STAFF' });

  for (const [key, value] of [
    ['church.name', 'Grace Community Church (demo)'],
    ['church.address', '1 Example Street, Springfield NSW 2000'],
    ['church.abn', '12 345 678 901'],
    ['bank.accountName', 'Grace Community Church'],
    ['bank.bsb', '062-000'],
    ['bank.accountNumber', '1234 5678'],
  ] as const) {
    await setSetting(ctx.db, key, value, now);
  }
  await setSetting(ctx.db, 'celebrations.birthdays', true, now);
  await setSetting(ctx.db, 'celebrations.anniversaries', true, now);

  const csv = [
    'first_name,last_name,email,mobile,birth_date,wedding_date,spouse_email,ministry_role,clearance_kind,clearance_number,clearance_expires',
    `Grace,Okafor,grace.okafor@demo.church.example,0412 345 678,${yearsAgo(34)},,,Kids Church leader,WWCC,WWC1234567E,${localDate(addDays(now, 20))}`,
    `Tom,Nguyen,tom.nguyen@demo.church.example,,${yearsAgo(61)},${yearsAgo(30)},lan.nguyen@demo.church.example,Youth leader,WWCC,WWC7654321E,${localDate(subDays(now, 12))}`,
    `Lan,Nguyen,lan.nguyen@demo.church.example,,1968-03-14,${yearsAgo(30)},tom.nguyen@demo.church.example,,,,`,
    `Ruth,Campbell,ruth.campbell@demo.church.example,,1990-07-02,,,Creche helper,,,`,
    `Sam,Lee,sam.lee@demo.church.example,0400 111 222,1985-01-20,,,Welcome team,WWCC,WWC5555555E,${localDate(addDays(now, 400))}`,
  ].join('\n');
  const people = await importPeople(ctx, csv);

  const event = await createEvent(
    ctx,
    parseEventFile({
      slug: DEMO_EVENT_SLUG,
      title: 'Family Camp',
      description: 'A weekend away for the whole church family.',
      startsAt: addDays(now, 2).toISOString(),
      location: 'Lakeside Conference Centre',
      capacity: 120,
      published: true,
      onlinePayment: true,
      passCardFee: true,
      reminderAt: subDays(now, 0.05).toISOString(),
      pricing: {
        tiers: [
          { id: 'adult', label: 'Adult', price: 12000 },
          { id: 'child', label: 'Child', price: 6000, child: true },
        ],
        familyWaiver: { maxChargedTickets: 3 },
      },
    }),
  );

  const registrations = [
    { name: 'Grace Okafor', email: 'grace.okafor@demo.church.example', status: 'PAID', method: 'card', attendees: [['Grace Okafor', 'adult']] },
    { name: 'Tom Nguyen', email: 'tom.nguyen@demo.church.example', status: 'PENDING', method: 'bank', attendees: [['Tom Nguyen', 'adult'], ['Lan Nguyen', 'adult']] },
    { name: 'Ruth Campbell', email: 'ruth.campbell@demo.church.example', status: 'PENDING', method: 'bank', attendees: [['Ruth Campbell', 'adult'], ['Eli Campbell', 'child']] },
    { name: 'Sam Lee', email: 'sam.lee@demo.church.example', status: 'CANCELLED', method: 'bank', attendees: [['Sam Lee', 'adult']] },
  ] as const;
  const prices: Record<string, number> = { adult: 12000, child: 6000 };
  const labels: Record<string, string> = { adult: 'Adult', child: 'Child' };
  await ctx.db('registrations').insert(
    registrations.map((r) => {
      const lineItems = r.attendees.map(([name, tier]) => ({ label: `${labels[tier]} — ${name}`, amount: prices[tier] }));
      return {
        event_id: event.event.id,
        status: r.status,
        contact_name: r.name,
        contact_email_enc: ctx.cipher.encrypt(r.email),
        contact_email_hash: ctx.cipher.lookupHash('email', r.email),
        attendees: JSON.stringify(r.attendees.map(([name, tier]) => ({ name, tier }))),
        attendee_count: r.attendees.length,
        payment_method: r.method,
        line_items: JSON.stringify(lineItems),
        total_minor: lineItems.reduce((sum, item) => sum + (item.amount ?? 0), 0),
        paid_at: r.status === 'PAID' ? now : null,
        cancelled_at: r.status === 'CANCELLED' ? now : null,
        created_at: subDays(now, 3),
        updated_at: subDays(now, 3),
      };
    }),
  );

  // An abandoned card checkout: opened yesterday, never paid.
  await ctx.db('checkout_sessions').insert({
    event_id: event.event.id,
    status: 'OPEN',
    expires_at: subDays(now, 1),
    payload_enc: ctx.cipher.encrypt(JSON.stringify({ contact: { name: 'Abandoned Cart', email: 'cart@demo.church.example' } })),
    net_minor: 12000,
    surcharge_minor: 240,
    provider_session_id: `cs_demo_${now.getTime()}`,
    created_at: subDays(now, 1.02),
    updated_at: subDays(now, 1.02),
  });

  // A week of errors, the same two faults recurring with different ids.
  for (let day = 0; day < 7; day++) {
    const at = subDays(now, day + 0.5);
    await recordError(ctx.db, new Error(`mail server timed out after ${30 + day} seconds for message ${1000 + day}`), { source: 'job:send-reminders', now: at });
    if (day % 2 === 0) {
      await recordError(ctx.db, new TypeError(`cannot read properties of undefined (reading 'tier') in registration ${day}`), { source: 'http', now: at });
    }
  }

  return { seeded: true, users: 3, people: people.created + people.updated, registrations: registrations.length };
}
