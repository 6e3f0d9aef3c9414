import type { Command } from 'commander';
import { z } from 'zod';
import { printResult, withContext } from '../io.js';
import { parseOrUsage } from '../usage.js';

const optionsSchema = z.object({ json: z.boolean().optional() });

/** `events attendance SLUG`, in a file of its own beside events.ts. */
export function registerEventsAttendanceCommand(events: Command): void {
  events
    .command('attendance')
    .description('after the day: who came (checked in), who did not, and who came unregistered (added at the door)')
    .argument('<slug>', 'the event')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nA walk-in is an attendee of a registration made at the door: `registrations add --at-door`,\nor any registration added once the event had started.\n\nExample:\n  $ eventops events attendance family-camp',
    )
    .action(async (slug: string, raw: Record<string, unknown>) => {
      const options = parseOrUsage(optionsSchema, raw, 'events attendance');
      await withContext(async (ctx) => {
        const { attendanceOf } = await import('../../door/attendance.js');
        const { localMinute } = await import('../../local-time.js');
        const { counted } = await import('../../plural.js');
        const report = await attendanceOf(ctx, slug);
        const minute = (date: Date) => localMinute(date, ctx.config.regional.timeZone);
        const registered = report.came.length + report.didNotCome.length;
        type Line = (typeof report.came)[number];
        const describe = (a: Line) =>
          `  ${a.name} (${a.tierLabel}) ${a.reference}${a.checkedInAt ? `, in ${minute(a.checkedInAt)} ${a.checkedInBy ?? ''}`.trimEnd() : ''}${a.checkedOutAt ? `, out ${minute(a.checkedOutAt)} ${a.checkedOutBy ?? ''}`.trimEnd() : ''}`;
        const section = (heading: string, lines: Line[]) => [`${heading} (${lines.length}):`, ...(lines.length === 0 ? ['  nobody'] : lines.map(describe))];
        printResult(options, report, [
          `${report.event.title} (${report.event.slug}): ${report.came.length} of ${counted(registered, 'registered attendee', 'registered attendees')} came, ${report.didNotCome.length} did not; ${counted(report.walkIns.length, 'walk-in', 'walk-ins')}`,
          ...section('Came', report.came),
          ...section('Did not come', report.didNotCome),
          ...section('Came unregistered', report.walkIns),
        ]);
      });
    });
}
