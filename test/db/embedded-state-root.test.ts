import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reachableStateRoot } from '../../src/db/embedded-runtime.js';
import { AppError } from '../../src/errors.js';

// As root, the embedded PostgreSQL's binaries and data may be kept in $TMPDIR/eventops, and root runs what it finds there.
let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-state-root-'));
  fs.chmodSync(tmp, 0o1777); // like /tmp: anyone may create entries, none may replace another's
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A runtime someone else left behind: its `.complete` marker says "ready to run". */
function plantRuntime(root: string): string {
  const planted = path.join(root, 'binaries-18.4.0-0123456789abcdef');
  fs.mkdirSync(path.join(planted, 'native', 'bin'), { recursive: true });
  fs.writeFileSync(path.join(planted, 'native', 'bin', 'postgres'), '#!/bin/sh\ntouch /tmp/owned\n', { mode: 0o755 });
  fs.writeFileSync(path.join(planted, '.complete'), '');
  return planted;
}

function refusal(candidate: string): AppError {
  try {
    reachableStateRoot([candidate]);
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error(`${candidate} was accepted`);
}

describe('the fallback state directory for root ($TMPDIR/eventops)', () => {
  it('is made by us, mode 0755, when missing', () => {
    const candidate = path.join(tmp, 'eventops');
    expect(reachableStateRoot([candidate])).toBe(candidate);
    const stat = fs.statSync(candidate);
    expect(stat.uid).toBe(os.userInfo().uid);
    expect(stat.mode & 0o7777).toBe(0o755);
  });

  it('is refused when another user made it first, with its planted runtime left unread', () => {
    const candidate = path.join(tmp, 'eventops');
    fs.mkdirSync(candidate, { mode: 0o755 });
    const planted = plantRuntime(candidate);
    const foreignUid = os.userInfo().uid === 0 ? 65534 : 0;
    if (os.userInfo().uid === 0) fs.chownSync(candidate, foreignUid, foreignUid);
    const target = os.userInfo().uid === 0 ? candidate : '/var/tmp'; // as a user, a directory root owns stands for another's
    const error = refusal(target);
    expect(error.code).toBe('state_directory_untrusted');
    expect(error.message).toContain(`belongs to uid ${foreignUid}`);
    expect(error.suggestion).toContain(`remove ${target}`);
    expect(fs.existsSync(path.join(planted, '.complete'))).toBe(true);
  });

  it('is refused when others may write it, even though it is ours: whatever is in it may have been planted', () => {
    const candidate = path.join(tmp, 'eventops');
    fs.mkdirSync(candidate);
    fs.chmodSync(candidate, 0o777);
    plantRuntime(candidate);
    const error = refusal(candidate);
    expect(error.code).toBe('state_directory_untrusted');
    expect(error.message).toContain('can be written by other users (mode 777)');
    // Refused as found: not quietly tightened and then trusted.
    expect(fs.statSync(candidate).mode & 0o777).toBe(0o777);
  });

  it('is refused when it is a symbolic link, which another user could point anywhere', () => {
    const ours = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-state-target-'));
    try {
      const candidate = path.join(tmp, 'eventops');
      fs.symlinkSync(ours, candidate);
      expect(refusal(candidate).message).toContain('is a symbolic link');
    } finally {
      fs.rmSync(ours, { recursive: true, force: true });
    }
  });

  it('is refused inside a directory anyone may write without the sticky bit, where it could be swapped after the check', () => {
    fs.chmodSync(tmp, 0o777);
    const candidate = path.join(tmp, 'eventops');
    const error = refusal(candidate);
    expect(error.message).toContain('can be written by other users and is not sticky');
  });

  it('an unusable first choice falls through to the next; a refused one stops the search', () => {
    const readOnlyParent = path.join(tmp, 'file');
    fs.writeFileSync(readOnlyParent, '');
    const fallback = path.join(tmp, 'eventops');
    expect(reachableStateRoot([path.join(readOnlyParent, 'eventops'), fallback])).toBe(fallback);
    fs.chmodSync(fallback, 0o775);
    expect(() => reachableStateRoot([fallback, path.join(tmp, 'other')])).toThrow(/can be written by other users/);
    expect(fs.existsSync(path.join(tmp, 'other'))).toBe(false);
  });
});
