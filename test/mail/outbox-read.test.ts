import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { linksIn, outboxFiles } from '../../src/mail/outbox-read.js';
import { outboxFileName } from '../../src/mail/outbox.js';
import { fromReferenceNow } from '../support/test-now.js';

describe('reading the dev outbox', () => {
  it('numbers the .eml files from the oldest, whatever order the directory lists them in, and leaves other files out', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-outbox-read-'));
    const newest = outboxFileName(fromReferenceNow({ minutes: 5 }), 'Reminder: Camp');
    const oldest = outboxFileName(fromReferenceNow({ days: -2 }), 'Your registration');
    const middle = outboxFileName(fromReferenceNow({}), 'Receipt');
    for (const name of [newest, oldest, middle, 'notes.txt']) fs.writeFileSync(path.join(dir, name), '');
    return expect(outboxFiles(dir)).resolves.toEqual([
      { number: 1, file: path.join(dir, oldest) },
      { number: 2, file: path.join(dir, middle) },
      { number: 3, file: path.join(dir, newest) },
    ]);
  });

  it('an outbox never written to (no directory yet) holds nothing', async () => {
    expect(await outboxFiles(path.join(os.tmpdir(), 'eventops-no-such-outbox', 'outbox'))).toEqual([]);
  });

  it('links: the HTML hrefs with their entities decoded, then text URLs not already found, without the sentence’s full stop; only http(s)', () => {
    const html = '<a href="https://x.example/r/1?token&#x3D;abc&amp;k=2">View</a> <a href=\'mailto:office@example.org\'>Mail</a>';
    const text = 'View: https://x.example/r/1?token=abc&k=2\nMore at https://grace.example.org/events.\n';
    expect(linksIn(html, text)).toEqual(['https://x.example/r/1?token=abc&k=2', 'https://grace.example.org/events']);
  });
});
