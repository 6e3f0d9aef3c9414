/**
 * The command under test, launched exactly as bin/eventops launches it, but
 * from the bench's own bundle of its compilation of src/ (bench/.build/cli,
 * made like dist/cli by scripts/bundle-cli.mjs): a concurrent `npm run build`
 * rewriting dist/ cannot change the code halfway through a run.
 * BENCH_BIN=bin/eventops measures the installed build instead.
 */
const bundle = '../cli/main.js';
(import(bundle) as Promise<{ main(argv: string[]): Promise<number> }>)
  .then((m) => m.main(process.argv))
  .catch((error: unknown) => {
    process.stderr.write(`eventops: cannot start (${error instanceof Error ? error.message : String(error)}).\n`);
    process.exitCode = 1;
  });
