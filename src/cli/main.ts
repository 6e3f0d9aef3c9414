import { Command, CommanderError, Option } from 'commander';
import { ConfigError } from '../config/load.js';
import { loadEnvFile } from '../config/env-file.js';
import { AppError, EXIT, errorMessage } from '../errors.js';
import { registerCommands } from './commands/index.js';
import { readVersion } from './version.js';

/** The program with every command, or only the one `argv` names (see registerCommands). */
export async function buildProgram(argv?: readonly string[]): Promise<Command> {
  const program = new Command('eventops')
    .description('Event operations for a church: background jobs, card payments and administration')
    .version(readVersion(process.env), '-V, --version', 'print the version (NEXT_PUBLIC_APP_VERSION and NEXT_PUBLIC_GIT_SHA when set)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  program.addHelpText(
    'after',
    `
Examples:
  $ eventops init                  write a .env with fresh secrets for local use
  $ eventops demo                  load a demo church and run every job once
  $ eventops config check          validate the configuration (exit 78 when invalid)
  $ eventops send-reminders --json run a job and print its summary as JSON

Exit codes: 0 ok, 1 failure, 2 usage, 75 another run holds the lease, 78 configuration.`,
  );
  await registerCommands(program, argv);
  return program;
}

/** The single error handler at the edge: maps every failure to a message and an exit code. */
export async function main(argv: string[]): Promise<number> {
  // A reader that stops early (`eventops --help | head`) is not a failure: stop quietly, as other tools do.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok);
  });
  let code: number = EXIT.ok;
  try {
    loadEnvFile(process.cwd()); // so --version sees NEXT_PUBLIC_* from .env; missing values are reported by each command
    const program = await buildProgram(argv);
    await program.parseAsync(argv);
    code = typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (error) {
    code = reportError(error, wantsJson(argv));
  }
  process.exitCode = code;
  return code;
}

/** `--json` among the options (not after `--`): a script reads the failure as JSON too. */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json');
}

interface ReportedError {
  code: string;
  message: string;
  suggestion?: string;
}

function reportError(error: unknown, json: boolean): number {
  if (error instanceof CommanderError) {
    // Help asked for (--help, `eventops help`) is success; help shown because a subcommand is missing
    // (`eventops registrations`, a cron line cut short) is a usage error, which commander marks with exit code 1.
    // Commander has already written its own message.
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT.ok;
    if (error.code === 'commander.help') return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    return EXIT.usage;
  }
  const write = (reported: ReportedError, exitCode: number): number => {
    if (json) process.stderr.write(`${JSON.stringify({ error: { ...reported, exitCode } })}\n`);
    else {
      process.stderr.write(`eventops: ${reported.code === 'unexpected' ? 'unexpected error: ' : ''}${reported.message}\n`);
      if (reported.suggestion) process.stderr.write(`  suggestion: ${reported.suggestion}\n`);
    }
    return exitCode;
  };
  if (error instanceof ConfigError) return write({ code: 'config_invalid', message: error.message }, EXIT.config);
  if (error instanceof AppError) return write({ code: error.code, message: error.message, suggestion: error.suggestion }, error.exitCode);
  const exitCode = write({ code: 'unexpected', message: errorMessage(error) }, EXIT.failure);
  if (process.env.LOG_LEVEL === 'debug' && error instanceof Error && error.stack) process.stderr.write(error.stack + '\n');
  return exitCode;
}

export { Option };
