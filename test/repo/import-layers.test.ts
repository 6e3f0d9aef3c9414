import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

// Data flows down: cli/http/scheduler -> jobs/payments/admin -> registrations -> mail/db/crypto/config.
// The registration domain (events, registrations, seats, history, the money ledger) sits below the
// office's commands and the card payments, so neither reaches into the other for it.
const SRC = path.join(ROOT, 'src');
const REGISTRATIONS_MAY_IMPORT = new Set(['registrations', 'db', 'crypto', 'config', 'mail', '(root)']);

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** Each source file's imports of other source files (static, dynamic and type-only alike). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .map((imported) => imported.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => path.resolve(path.dirname(file), name.replace(/\.js$/, '.ts')));
    graph.set(file, targets);
  }
  return graph;
}

function area(file: string): string {
  const parts = path.relative(SRC, file).split(path.sep);
  return parts.length === 1 ? '(root)' : parts[0]!;
}

function areaEdges(graph: Map<string, string[]>): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const from = area(file);
      const to = area(target);
      if (from === to || from === '(root)' || to === '(root)') continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)!.add(to);
    }
  }
  return edges;
}

/** One cycle through the graph, as a path, or undefined. */
function findCycle<T>(nodes: Iterable<T>, next: (node: T) => Iterable<T>): T[] | undefined {
  const state = new Map<T, 'open' | 'done'>();
  const stack: T[] = [];
  const visit = (node: T): T[] | undefined => {
    if (state.get(node) === 'done') return undefined;
    if (state.get(node) === 'open') return [...stack.slice(stack.indexOf(node)), node];
    state.set(node, 'open');
    stack.push(node);
    for (const target of next(node)) {
      const cycle = visit(target);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of nodes) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return undefined;
}

describe('import layers', () => {
  const graph = importGraph();

  it('no source file imports itself through a circle of imports', () => {
    expect(graph.size).toBeGreaterThan(100);
    const cycle = findCycle(graph.keys(), (file) => graph.get(file) ?? []);
    expect(cycle?.map((file) => path.relative(ROOT, file))).toBeUndefined();
  });

  it('no two areas of the source import each other, directly or around a circle', () => {
    const edges = areaEdges(graph);
    const cycle = findCycle(edges.keys(), (name) => edges.get(name) ?? []);
    expect(cycle).toBeUndefined();
  });

  it('the registration domain imports only what lies below it', () => {
    const outward = [...graph]
      .filter(([file]) => area(file) === 'registrations')
      .flatMap(([file, targets]) => targets.filter((target) => !REGISTRATIONS_MAY_IMPORT.has(area(target))).map((target) => `${path.relative(SRC, file)} -> ${path.relative(SRC, target)}`));
    expect(outward).toEqual([]);
  });

  it('card payments never reach into the office commands', () => {
    const intoAdmin = [...graph]
      .filter(([file]) => area(file) === 'payments')
      .flatMap(([file, targets]) => targets.filter((target) => area(target) === 'admin').map((target) => `${path.relative(SRC, file)} -> ${path.relative(SRC, target)}`));
    expect(intoAdmin).toEqual([]);
  });
});
