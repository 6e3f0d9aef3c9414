import Handlebars from 'handlebars';
import type { AppContext } from '../context.js';
import { moneyFormatter } from '../money-format.js';
import { memberDateTime, memberDateTimeSpan } from '../time-format.js';
import { counted } from '../plural.js';
import { groupByFamily } from './family-order.js';
import { loadEventForRoll, loadRoll } from './roll.js';
import { eventAddonLabels } from '../registrations/addon-records.js';

/**
 * The roll on paper: one self-contained HTML page (no script, its styles inline, print CSS for A4 or Letter), one
 * line per attendee, families together (family-order.ts), with boxes to tick in and out and the flags the door needs: what the
 * registration owes, the answers of questions marked showAtCheckin, a child's guardian. A browser prints it or
 * saves it as a PDF; HTML was chosen over a PDF library so that no new dependency is needed and the page can be
 * checked like any other.
 */
const handlebars = Handlebars.create();
const template = handlebars.compile<PrintedRollData>(`<!doctype html>
<html lang="{{lang}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Roll: {{title}}</title>
<style>
  body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #000; margin: 16px; font-size: 12pt; }
  h1 { font-size: 16pt; margin: 0 0 4px; }
  .meta { margin: 0 0 12px; color: #333; }
  table { width: 100%; border-collapse: collapse; }
  th, td { border: 1px solid #555; padding: 4px 6px; text-align: left; vertical-align: top; }
  th { background: #eee; }
  td.box { width: 2.2em; text-align: center; font-size: 14pt; }
  /* One tbody per family: a heavier rule between families, and a family is not split across pages. */
  tbody.family { border-top: 2.5px solid #000; }
  .flag { display: block; }
  .owes { font-weight: bold; }
  @page { margin: 12mm; }
  @media print {
    body { margin: 0; font-size: 10pt; }
    thead { display: table-header-group; }
    tr, tbody.family { break-inside: avoid; page-break-inside: avoid; }
    th { background: none; }
  }
</style>
</head>
<body>
<h1>Roll: <bdi>{{title}}</bdi></h1>
<p class="meta">{{when}} · {{countText}} · printed {{printedAt}}</p>
<table id="roll">
<thead><tr><th>In</th><th>Out</th><th>Name</th><th>Ticket</th><th>Flags</th><th>Contact</th><th>Ref.</th></tr></thead>
{{#each families}}
<tbody class="family">
{{#each this}}
<tr class="attendee">
  <td class="box">{{#if here}}&#9745;{{else}}&#9744;{{/if}}</td>
  <td class="box">{{#if left}}&#9745;{{else}}&#9744;{{/if}}</td>
  <td class="name"><bdi>{{name}}</bdi></td>
  <td>{{tierLabel}}</td>
  <td class="flags">{{#if owes}}<span class="flag owes">Owes {{owes}}</span>{{/if}}{{#if guardian}}<span class="flag guardian">Guardian: <bdi>{{guardian}}</bdi></span>{{/if}}{{#each flags}}<span class="flag answer">{{label}}: {{value}}</span>{{/each}}</td>
  <td><bdi>{{contactName}}</bdi></td>
  <td>{{reference}}</td>
</tr>
{{/each}}
</tbody>
{{/each}}
</table>
</body>
</html>
`);

interface PrintedRollData {
  lang: string;
  title: string;
  when: string;
  countText: string;
  printedAt: string;
  families: Array<Array<{
    here: boolean;
    left: boolean;
    name: string;
    tierLabel: string;
    owes: string | null;
    guardian: string | null;
    flags: Array<{ label: string; value: string }>;
    contactName: string;
    reference: string;
  }>>;
}

export async function printedRoll(ctx: Pick<AppContext, 'db' | 'cipher' | 'config' | 'clock'>, eventSlug: string): Promise<{ html: string; attendees: number }> {
  const roll = await loadRoll(ctx, await loadEventForRoll(ctx, { slug: eventSlug }));
  const money = moneyFormatter(ctx.config.regional);
  const extras = await eventAddonLabels(ctx.db, roll.event.id, roll.event.pricing);
  const html = template({
    lang: ctx.config.regional.locale,
    title: roll.event.title,
    when: memberDateTimeSpan(ctx.config.regional)(roll.event.startsAt, roll.event.endsAt),
    countText: counted(roll.total, 'attendee', 'attendees'),
    printedAt: memberDateTime(ctx.config.regional)(ctx.clock.now()),
    families: groupByFamily(roll.attendees).map((family) => family.map((a) => ({
      here: a.state !== 'away',
      left: a.state === 'left',
      name: a.name,
      tierLabel: a.tierLabel,
      owes: a.owesMinor > 0 ? money(a.owesMinor) : null,
      guardian: a.guardian,
      flags: [...a.flags, ...(extras.has(a.key) ? [{ label: 'Extras', value: (extras.get(a.key) ?? []).join(', ') }] : [])],
      contactName: a.contactName,
      reference: a.reference,
    }))),
  });
  return { html, attendees: roll.total };
}
