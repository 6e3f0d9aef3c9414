// Node's compile cache (module.enableCompileCache, turned on by bin/eventops) stores the
// code V8 compiled *while compiling a file*. V8 compiles a function then only when it
// expects it to run at once, and the only sign it reads is a `function` expression
// in parentheses. esbuild wraps each bundled CommonJS module (pg, knex, pino…) and
// each lazily initialised ES module in an arrow function, `var x = helper((exports,
// module) => { …module body… })`, which V8 compiles only when the module is first
// required: every start compiled those bodies again, uncached (a fifth of a cron
// job's start-up). Rewritten as `helper((function(exports, module) { … }))`, they are
// compiled with the file and kept in the cache.
import * as acorn from 'acorn';

/**
 * Rewrites each top-level `var x = f(<arrow with a block body>)` as
 * `var x = f((function(…) { … }))`. An arrow that reads `this`, `arguments`,
 * `new.target` or `super` of its surroundings is left as it is (a function would
 * see its own); esbuild's factories never do, and are called as plain functions.
 * The edits touch the wrapper's own first and last lines (esbuild puts the body on
 * lines of its own when whitespace is kept), so the source map stays true.
 */
export function compileFactoriesEagerly(source) {
  const program = acorn.parse(source, { ecmaVersion: 'latest', sourceType: 'module' });
  const edits = [];
  for (const statement of program.body) {
    if (statement.type !== 'VariableDeclaration') continue;
    for (const { init } of statement.declarations) {
      const factory = init?.type === 'CallExpression' && init.arguments.length === 1 ? init.arguments[0] : undefined;
      if (factory?.type !== 'ArrowFunctionExpression' || factory.async || factory.body.type !== 'BlockStatement') continue;
      if (readsEnclosingScope(factory.body)) continue;
      const params = factory.params.map((param) => source.slice(param.start, param.end)).join(', ');
      edits.push({ start: factory.start, end: factory.body.start, text: `(function(${params}) ` });
      edits.push({ start: factory.end, end: factory.end, text: ')' });
    }
  }
  let output = source;
  for (const edit of edits.sort((a, b) => b.start - a.start)) {
    output = output.slice(0, edit.start) + edit.text + output.slice(edit.end);
  }
  return { code: output, rewritten: edits.length / 2 };
}

/** Whether `node` uses the `this`, `arguments`, `new.target` or `super` an arrow shares with its surroundings. */
function readsEnclosingScope(node) {
  if (!node || typeof node.type !== 'string') return false;
  switch (node.type) {
    case 'ThisExpression':
    case 'Super':
    case 'MetaProperty':
      return true;
    case 'Identifier':
      return node.name === 'arguments';
    case 'FunctionExpression':
    case 'FunctionDeclaration':
    case 'StaticBlock':
      return false; // binds its own
    case 'PropertyDefinition':
      return node.computed && readsEnclosingScope(node.key); // a class field's value sees the instance's `this`
    default:
      break;
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === 'start' || key === 'end' || key === 'loc') continue;
    const children = Array.isArray(value) ? value : [value];
    if (children.some((child) => child && typeof child === 'object' && readsEnclosingScope(child))) return true;
  }
  return false;
}
