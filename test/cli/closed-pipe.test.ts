import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../support/cli.js';

describe('output piped to a reader that stops early', () => {
  it('`eventops --help` into a pipe whose reader has gone ends quietly with exit 0, not with an EPIPE stack', async () => {
    const child = spawn(process.execPath, [BIN, '--help'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // The reader is gone before the command writes a line, as when `head` has already exited.
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));

    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(0);
  });
});
