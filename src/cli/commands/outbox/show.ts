import type { Command } from 'commander';
import { z } from 'zod';
import { AppError } from '../../../errors.js';
import { printResult } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { OUTBOX_EMPTY_SUGGESTION, outboxDirOf } from './outbox-dir.js';

const optionsSchema = z.object({
  number: z.coerce.number().int().min(1).optional(),
  json: z.boolean().optional(),
});

export function registerOutboxShowCommand(outbox: Command): void {
  outbox
    .command('show')
    .description('show one message of the dev outbox: who it went to, subject, date, its text decoded, and the links in it')
    .argument('[number]', 'the number `eventops outbox list` gives it (1 is the oldest); the newest message when left out')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  $ eventops outbox show 3\n  $ eventops outbox show          (the newest)\n  $ eventops outbox show 3 --json\n\n' +
        'The text part is shown decoded (the .eml file holds it quoted-printable, which splits long lines and writes "=" as =3D),\n' +
        'and every link is listed whole, ready to open. Exit 1 when there is no such message or no outbox.',
    )
    .action(async (number: string | undefined, raw: Record<string, unknown>) => {
      const options = parseOrUsage(optionsSchema, { ...raw, number }, 'outbox show', ['number']);
      const { loadRuntimeConfig } = await import('../../runtime.js');
      const { config } = loadRuntimeConfig();
      const dir = outboxDirOf(config);
      const { outboxFiles, readOutboxMessage } = await import('../../../mail/outbox-read.js');
      const files = await outboxFiles(dir);
      if (files.length === 0) {
        throw new AppError('outbox_empty', `the outbox (${dir}) is empty: there is no message to show`, { suggestion: OUTBOX_EMPTY_SUGGESTION });
      }
      const chosen = options.number === undefined ? files.at(-1) : files[options.number - 1];
      if (!chosen) {
        throw new AppError('not_found', `there is no message ${options.number}: the outbox holds ${files.length} (1 to ${files.length})`, {
          suggestion: '`eventops outbox list` numbers them, 1 for the oldest',
        });
      }
      const message = await readOutboxMessage(chosen.file);
      const { localMinute } = await import('../../../local-time.js');
      printResult(options, { number: chosen.number, file: chosen.file, ...message }, [
        `message ${chosen.number} of ${files.length} (${chosen.file})`,
        `From:    ${message.from}`,
        `To:      ${message.to.join(', ')}`,
        ...(message.cc.length > 0 ? [`Cc:      ${message.cc.join(', ')}`] : []),
        `Date:    ${localMinute(message.date, config.regional.timeZone)} (${config.regional.timeZone})`,
        `Subject: ${message.subject}`,
        '',
        message.text.trimEnd(),
        '',
        ...(message.links.length === 0 ? ['Links: none'] : ['Links:', ...message.links.map((link, index) => `  [${index + 1}] ${link}`)]),
      ]);
    });
}
