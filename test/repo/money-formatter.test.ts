import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

// Every command writes money as `registrations` does (APP_LOCALE, APP_CURRENCY, the currency's own
// decimals): through moneyFormatter in src/office/registrations/money.ts, never a copy of it.
describe('the command line formats money in one place', () => {
  it('no command under src/cli builds its own currency formatter', () => {
    const dir = path.join(ROOT, 'src/cli');
    const files = fs.readdirSync(dir, { recursive: true }).map(String).filter((file) => file.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(20);
    const copies = files.filter((file) => /style:\s*'currency'/.test(fs.readFileSync(path.join(dir, file), 'utf8')));
    expect(copies).toEqual([]);
  });
});
