import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

// Data flows down: cli/http/scheduler -> jobs -> family/door -> office -> signup -> payments -> registrations ->
// mail/db/crypto/config. The registration domain (events, registrations, seats, history, the money ledger, the
// door's records) sits below every room that uses it, so none reaches into another for it.
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

  // The rooms are named after who uses them: the office's operations (office/), the family's own pages (family/),
  // the volunteers at the door (door/), and the registration flow a family goes through on the form (signup/).
  const reachesInto = (from: string[], into: string[]) =>
    [...graph]
      .filter(([file]) => from.includes(area(file)))
      .flatMap(([file, targets]) => targets.filter((target) => into.includes(area(target))).map((target) => `${path.relative(SRC, file)} -> ${path.relative(SRC, target)}`));

  it('card payments never reach into the rooms above them: the sign-up flow, the office, the family or the door', () => {
    expect(reachesInto(['payments'], ['signup', 'office', 'family', 'door'])).toEqual([]);
  });

  it("the sign-up flow never reaches into the office's, the family's or the door's rooms", () => {
    expect(reachesInto(['signup'], ['office', 'family', 'door'])).toEqual([]);
  });

  it("the office's operations never reach into the family's pages or the door, which build on them", () => {
    expect(reachesInto(['office'], ['family', 'door'])).toEqual([]);
  });

  it('the family and the door keep to their own rooms', () => {
    expect(reachesInto(['family'], ['door'])).toEqual([]);
    expect(reachesInto(['door'], ['family'])).toEqual([]);
  });

  it('no admin/ room is left behind', () => {
    expect(fs.existsSync(path.join(SRC, 'admin'))).toBe(false);
  });
});
