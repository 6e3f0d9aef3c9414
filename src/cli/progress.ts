export interface ProgressCounts {
  done: number;
  total?: number;
}

/** Progress of a long command: a live spinner on a terminal, plain (or JSON) lines on stderr otherwise. */
export interface Progress {
  update(text: string, counts?: ProgressCounts): void;
  succeed(text: string): void;
  fail(text: string): void;
  /** A line that stays in the output (the spinner, if any, redraws below it). */
  log(line: string): void;
}

export interface ProgressOptions {
  /** A terminal is watching: show an ora spinner. Ignored with json. */
  interactive: boolean;
  /** Write JSON lines ({label, event, text, done?, total?}) instead of text. */
  json: boolean;
  label: string;
  /** Where progress goes; stderr by default so stdout keeps only the command's result. */
  stream?: NodeJS.WritableStream;
}

type ProgressEvent = 'update' | 'succeed' | 'fail' | 'log';

function withCounts(text: string, counts?: ProgressCounts): string {
  if (!counts) return text;
  return counts.total === undefined ? `${text} (${counts.done})` : `${text} (${counts.done}/${counts.total})`;
}

/**
 * A terminal that reports no width (some pseudo-terminals: `script`, `docker -t`)
 * makes ora compute infinitely many lines to clear and hang, so it gets plain lines.
 */
function canAnimate(stream: NodeJS.WritableStream): boolean {
  const terminal = stream as Partial<Pick<NodeJS.WriteStream, 'isTTY' | 'columns'>>;
  return terminal.isTTY === true && (terminal.columns ?? 0) > 0;
}

export async function createProgress(options: ProgressOptions): Promise<Progress> {
  const stream = options.stream ?? process.stderr;
  if (options.interactive && !options.json && canAnimate(stream)) {
    const { default: ora } = await import('ora');
    const spinner = ora({ text: options.label, stream }).start();
    return {
      update: (text, counts) => {
        spinner.text = `${options.label}: ${withCounts(text, counts)}`;
      },
      succeed: (text) => void spinner.succeed(`${options.label}: ${text}`),
      fail: (text) => void spinner.fail(`${options.label}: ${text}`),
      log: (line) => {
        spinner.clear();
        stream.write(`${line}\n`);
        spinner.render();
      },
    };
  }

  const write = (event: ProgressEvent, text: string, counts?: ProgressCounts): void => {
    stream.write(
      options.json
        ? `${JSON.stringify({ label: options.label, event, text, ...counts })}\n`
        : `${options.label}: ${event === 'fail' ? 'failed: ' : ''}${withCounts(text, counts)}\n`,
    );
  };
  return {
    update: (text, counts) => write('update', text, counts),
    succeed: (text) => write('succeed', text),
    fail: (text) => write('fail', text),
    log: (line) => write('log', line),
  };
}
