import type { Command } from 'commander';
import { z } from 'zod';
import { printResult } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { OUTBOX_EMPTY_SUGGESTION, outboxDirOf } from './outbox-dir.js';

const optionsSchema = z.object({ json: z.boolean().optional() });

export function registerOutboxListCommand(outbox: Command): void {
  outbox
    .command('list')
    .description('list the messages in the dev outbox, oldest first: number, date (APP_TIMEZONE), recipients, subject')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  $ eventops outbox list\n  $ eventops outbox list --json\n\n' +
        'Number 1 is the oldest message, the last line the newest; `eventops outbox show N` reads one.\n' +
        'An empty outbox is no error: it says so, exit 0. With SMTP or a mail API configured, or in production, there is no outbox: exit 1.',
    )
    .action(async (raw: unknown) => {
      const options = parseOrUsage(optionsSchema, raw, 'outbox list');
      const { loadRuntimeConfig } = await import('../../runtime.js');
      const { config } = loadRuntimeConfig();
      const dir = outboxDirOf(config);
      const { outboxFiles, readOutboxMessage } = await import('../../../mail/outbox-read.js');
      const { localMinute } = await import('../../../local-time.js');
      const files = await outboxFiles(dir);
      const messages = [];
      for (const { number, file } of files) {
        const message = await readOutboxMessage(file);
        messages.push({ number, file, date: message.date, to: message.to, subject: message.subject });
      }
      if (messages.length === 0) {
        printResult(options, { outbox: dir, messages }, [`the outbox (${dir}) is empty: no mail has been written to it yet`, OUTBOX_EMPTY_SUGGESTION]);
        return;
      }
      const width = String(messages.length).length;
      const when = (date: Date) => localMinute(date, config.regional.timeZone);
      printResult(options, { outbox: dir, messages }, [
        `${messages.length} message${messages.length === 1 ? '' : 's'} in ${dir}, oldest first (dates in ${config.regional.timeZone}):`,
        ...messages.map((m) => `${String(m.number).padStart(width)}  ${when(m.date)}  ${m.to.join(', ')}  ${m.subject}`),
        '`eventops outbox show N` reads one',
      ]);
    });
}
