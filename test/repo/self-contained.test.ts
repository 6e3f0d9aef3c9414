import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

// A clone from the project's public home has nothing beside it: code, tests, bench,
// soak and CI read only what the repository holds.
const SCANNED = ['src', 'test', 'bench', 'soak', '.ci', 'bin', 'migrations'];
const SKIPPED_DIRS = new Set(['node_modules', '.build', 'dist']);
// Built from parts so this file does not match itself.
const OUTSIDE_REFERENCES = [['..', 'shared'].join('/'), ['shared', 'fixtures'].join('/'), ['shared', 'spec'].join('/')];

function* filesUnder(dir: string): Generator<string> {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED_DIRS.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(full);
    else if (entry.isFile()) yield full;
  }
}

describe('the repository is self-contained', () => {
  it('no source, test, bench, soak or CI file refers to files beside the checkout', () => {
    const offenders: string[] = [];
    let scanned = 0;
    for (const top of SCANNED) {
      for (const file of filesUnder(path.join(ROOT, top))) {
        if (file.endsWith('.json') && file.includes(`${path.sep}fixtures${path.sep}`)) continue;
        scanned += 1;
        const text = fs.readFileSync(file, 'utf8');
        for (const reference of OUTSIDE_REFERENCES) {
          if (text.includes(reference)) offenders.push(`${path.relative(ROOT, file)}: ${reference}`);
        }
      }
    }
    expect(scanned).toBeGreaterThan(100);
    expect(offenders).toEqual([]);
  });

  it('the provider fixtures the tests build on are inside the repository', () => {
    const fixtures = JSON.parse(fs.readFileSync(path.join(ROOT, 'test/fixtures/provider/stripe-objects.json'), 'utf8'));
    expect(Object.keys(fixtures).sort()).toEqual(
      ['charge', 'checkout.session', 'dispute', 'event', 'line_item', 'payment_intent', 'refund', 'webhook_endpoint'].sort(),
    );
    expect(fs.readFileSync(path.join(ROOT, 'test/fixtures/provider/README.md'), 'utf8')).toMatch(/MIT/);
  });
});
