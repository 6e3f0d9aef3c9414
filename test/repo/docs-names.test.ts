import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { loadConfig } from '../../src/config/load.js';
import { ROOT } from '../support/cli.js';
import { testEnv } from '../support/env.js';

/**
 * The README and the guides in docs/ name commands and variables a reader types: each must exist.
 * docs/decisions.md is left out: it records what was decided when, and may name what has changed since.
 */
const DOCS = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((file) => file.endsWith('.md') && file !== 'decisions.md').map((file) => `docs/${file}`)];

/**
 * Environment variables the guides name that the configuration loader does not read, each with the file that reads
 * it (the test checks it does, so a name dropped there cannot linger here).
 */
const OUTSIDE_THE_CONFIGURATION: Record<string, string> = {
  TEST_DATABASE_URL: 'test/support/global-setup.ts',
  CHROMIUM_PATH: 'test/support/chromium.ts',
  NODE_COMPILE_CACHE: 'bin/eventops',
  NODE_DISABLE_COMPILE_CACHE: 'bin/eventops',
  BENCH_SCALE: 'bench/run.ts',
  BENCH_CASES: 'bench/run.ts',
  CRON_TZ: 'crontab.example',
  LD_PRELOAD: 'test/support/cli.ts',
  NO_COLOR: 'src/cli/runtime.ts',
};

/** The text of every code span and fenced block of a Markdown file, one entry per line (spans as one line). */
export function codeOf(markdown: string): string[] {
  const code: string[] = [];
  const prose: string[] = [];
  let fence: string[] | undefined;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) {
      if (fence) {
        // A shell line continued with a trailing backslash is one command.
        code.push(...fence.join('\n').replace(/\s*\\\n\s*/g, ' ').split('\n'));
        fence = undefined;
      } else {
        fence = [];
      }
    } else if (fence) {
      fence.push(line);
    } else {
      prose.push(line);
    }
  }
  for (const match of prose.join('\n').matchAll(/(`+)([\s\S]*?[^`])\1(?!`)/g)) {
    // In a table `\|` is a "|" inside the span; a span broken over lines is one line.
    code.push((match[2] as string).replace(/\\\|/g, '|').replace(/\s*\n\s*/g, ' '));
  }
  return code;
}

interface NamedCommand {
  file: string;
  text: string;
  command: string;
  /** The subcommands named (`create|update` names two), when the command has subcommands. */
  subcommands: string[];
  options: string[];
}

const SHELL_BREAK = new Set(['&&', '||', ';', '|', '>', '>>', '2>&1']);

/** Every `eventops <command> [subcommand] [--option…]` in the code of a file. */
export function commandsNamed(file: string, markdown: string, program: Command): NamedCommand[] {
  const found: NamedCommand[] = [];
  for (const line of codeOf(markdown)) {
    for (const match of line.matchAll(/(?<![\w./-])eventops\s+([a-z][\w-]*)(.*)$/g)) {
      const tokens: string[] = [];
      for (const token of (match[2] as string).trim().split(/\s+/)) {
        if (SHELL_BREAK.has(token) || token.startsWith('#')) break;
        if (token !== '') tokens.push(token);
      }
      const command = match[1] as string;
      const group = program.commands.find((c) => c.name() === command);
      const next = tokens[0]?.replace(/[),.;:]+$/, '');
      const subcommands = group && group.commands.length > 0 && next && /^[a-z][\w-]*(\|[a-z][\w-]*)*$/.test(next) ? next.split('|') : [];
      const options = tokens.filter((token) => /^[[(]?--?[a-z]/i.test(token)).map((token) => token.replace(/^[[(]+/, '').replace(/[=\]),.;:].*$/, ''));
      found.push({ file, text: ['eventops', command, ...tokens].join(' '), command, subcommands, options });
    }
  }
  return found;
}

/** What is wrong with one named command against the real program, or undefined. */
export function commandProblem(named: NamedCommand, program: Command): string | undefined {
  const top = program.commands.find((c) => c.name() === named.command);
  if (!top) return `no command "${named.command}"`;
  const targets = named.subcommands.length === 0 ? [top] : named.subcommands.map((name) => top.commands.find((c) => c.name() === name));
  const missing = named.subcommands.filter((_, i) => targets[i] === undefined);
  if (missing.length > 0) return `no subcommand "${named.command} ${missing.join('", "')}"`;
  const known = new Set(['--help', '-h', ...targets.flatMap((c) => (c as Command).options.flatMap((o) => [o.long, o.short]).filter((f): f is string => Boolean(f)))]);
  const unknown = named.options.filter((option) => !known.has(option));
  return unknown.length > 0 ? `no option ${unknown.join(', ')}` : undefined;
}

/** Every name that looks like an environment variable in the code of a file: UPPER_SNAKE, or any `NAME=`. */
export function variablesNamed(markdown: string): string[] {
  const names = new Set<string>();
  for (const line of codeOf(markdown)) {
    for (const match of line.matchAll(/(?<![\w-])([A-Z][A-Za-z0-9_]*)(=?)/g)) {
      const name = match[1] as string;
      const snake = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(name) || /^[A-Z][A-Z0-9_]*_Vn$/.test(name);
      if (snake || (match[2] === '=' && /^[A-Z][A-Z0-9_]*$/.test(name))) names.add(name);
    }
  }
  return [...names];
}

/** The variables the configuration loader reads, as the .env.example test finds them. */
function variablesTheLoaderReads(): Set<string> {
  const read = new Set<string>();
  const env = new Proxy(testEnv(), {
    get: (target, name) => {
      if (typeof name === 'string') read.add(name);
      return target[name as string];
    },
  });
  loadConfig(env);
  return read;
}

const isKeyVersion = (name: string) => /^ENCRYPTION_KEY_V(\d+|n)$/.test(name);
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

describe('the names the README and the guides give', () => {
  it('every `eventops <command> [subcommand] [--option]` they name exists in the real command', async () => {
    const program = await buildProgram();
    const named = DOCS.flatMap((file) => commandsNamed(file, read(file), program));
    expect(named.length).toBeGreaterThan(100);
    const problems = named.flatMap((n) => {
      const problem = commandProblem(n, program);
      return problem ? [`${n.file}: ${n.text}: ${problem}`] : [];
    });
    expect(problems).toEqual([]);
  });

  it('the README names every command and subcommand the program has', async () => {
    const program = await buildProgram();
    const readme = commandsNamed('README.md', read('README.md'), program);
    const named = new Set(readme.flatMap((n) => (n.subcommands.length === 0 ? [n.command] : n.subcommands.map((s) => `${n.command} ${s}`))));
    const every = program.commands.flatMap((c) => (c.commands.length === 0 ? [c.name()] : c.commands.map((s) => `${c.name()} ${s.name()}`)));
    expect(every.filter((name) => !named.has(name))).toEqual([]);
  });

  it('every environment variable they name is one the configuration reads (or one the tools read, listed here)', () => {
    const known = variablesTheLoaderReads();
    expect(known).toContain('NODE_ENV');
    for (const [name, file] of Object.entries(OUTSIDE_THE_CONFIGURATION)) expect(read(file), `${name} in ${file}`).toContain(name);
    const unknown = DOCS.flatMap((file) =>
      variablesNamed(read(file))
        .filter((name) => !known.has(name) && !isKeyVersion(name) && !(name in OUTSIDE_THE_CONFIGURATION))
        .map((name) => `${file}: ${name}`),
    );
    expect(unknown).toEqual([]);
  });

  it('the configuration reference has a row for every variable the configuration reads', () => {
    // The first cell of each row of its tables: `NAME`, or several names.
    const rows = read('docs/configuration.md').split('\n').filter((line) => /^\| `[A-Z]/.test(line));
    const listed = new Set(rows.flatMap((row) => [...(row.split('|')[1] as string).matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1] as string)));
    expect(listed).toContain('HOST');
    expect([...variablesTheLoaderReads()].filter((name) => !listed.has(name))).toEqual([]);
  });
});

describe('the checks themselves', () => {
  it('catch a command, a subcommand, an option and a variable that do not exist', async () => {
    const program = await buildProgram();
    const doc = [
      '`eventops events create docs/examples/first-event.json` and `eventops events frobnicate x`,',
      '`eventops frobnicate`, `eventops checkin link family-camp --frobnicate`, `FROBNICATE_URL=x`.',
      '```sh',
      'eventops registrations add --event camp \\',
      '  --frobnicate',
      '```',
    ].join('\n');
    const problems = Object.fromEntries(commandsNamed('doc.md', doc, program).map((n) => [n.text, commandProblem(n, program)]));
    expect(problems).toEqual({
      'eventops events create docs/examples/first-event.json': undefined,
      'eventops events frobnicate x': 'no subcommand "events frobnicate"',
      'eventops frobnicate': 'no command "frobnicate"',
      'eventops checkin link family-camp --frobnicate': 'no option --frobnicate',
      'eventops registrations add --event camp --frobnicate': 'no option --frobnicate',
    });
    expect(variablesNamed(doc)).toEqual(['FROBNICATE_URL']);
    expect(variablesTheLoaderReads().has('FROBNICATE_URL')).toBe(false);
  });
});
