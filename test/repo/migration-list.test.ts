import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrationSource } from '../../src/db/migration-source.js';
import { ROOT } from '../support/cli.js';

// Migrations are listed by hand (no file-system loader in the bundled CLI): a file left out of
// the list would never run, and nothing else would notice.
describe('the hand-written migration list', () => {
  it('names every file in migrations/, once, in the order of the file names', async () => {
    const files = fs
      .readdirSync(path.join(ROOT, 'migrations'))
      .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
      .map((name) => name.replace(/\.ts$/, ''))
      .sort();
    const listed = await migrationSource.getMigrations([]);
    expect(listed).toEqual(files);
  });
});
