import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

type Rewrite = (source: string) => { code: string; rewritten: number };
const { compileFactoriesEagerly } = (await import(pathToFileURL(path.join(ROOT, 'scripts/eager-module-factories.mjs')).href)) as {
  compileFactoriesEagerly: Rewrite;
};

// The shape esbuild gives a bundled CommonJS module: a helper that calls the factory once, as a plain function.
const BUNDLED = `var commonJS = (factory, module) => () => (module || factory((module = { exports: {} }).exports, module), module.exports);
var require_counter = commonJS((exports, module) => {
  let count = 0;
  module.exports = { next: () => ++count, calls: (function () { return arguments.length; })(1, 2) };
});
var lazy = commonJS(() => {
  return this;
});
var answer = require_counter().next() + require_counter().next();
`;

describe('bundled module bodies are compiled with their file, so the compile cache keeps them', () => {
  it('rewrites a module factory as a parenthesised function, which V8 compiles at once', () => {
    const { code, rewritten } = compileFactoriesEagerly(BUNDLED);
    expect(rewritten).toBe(1);
    expect(code).toContain('var require_counter = commonJS((function(exports, module) {');
    expect(code).toContain('}));\nvar lazy');
  });

  it('leaves an arrow that reads the this of its surroundings as it was', () => {
    const { code } = compileFactoriesEagerly(BUNDLED);
    expect(code).toContain('var lazy = commonJS(() => {\n  return this;\n});');
  });

  it('keeps every line where it was (the source map stays true) and the module behaves the same', () => {
    const { code } = compileFactoriesEagerly(BUNDLED);
    expect(code.split('\n')).toHaveLength(BUNDLED.split('\n').length);
    const run = (source: string) => vm.runInNewContext(`"use strict";\n${source}\n[answer, require_counter().calls]`) as unknown[];
    expect(run(code)).toEqual(run(BUNDLED));
    expect(run(code)).toEqual([3, 2]);
  });

  it('the built command has no module factory left for V8 to compile on first use', () => {
    const outdir = path.join(ROOT, 'dist/cli');
    const files = fs.readdirSync(outdir, { recursive: true }).map(String).filter((file) => file.endsWith('.js'));
    expect(files.length).toBeGreaterThan(10);
    const left = files.filter((file) => compileFactoriesEagerly(fs.readFileSync(path.join(outdir, file), 'utf8')).rewritten > 0);
    expect(left).toEqual([]);
    // Which chunk holds the bundled packages (knex, pg, pino) depends on what imports them; one of them does.
    const eager = files.filter((file) => /= \w+\(\(function\(/.test(fs.readFileSync(path.join(outdir, file), 'utf8')));
    expect(eager.length).toBeGreaterThan(0);
  });
});
