import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { useOfficeCli } from '../support/office-cli.js';

const office = useOfficeCli();
const cli = (args: string[]) => runCli(['registrations', ...args], { env: office.env });
const NOBODY = 65534;

let slug: string;
beforeAll(async () => {
  const event = await insertEvent(office.db);
  slug = event.slug;
  await insertRegistration(office.db, office.context().cipher, event.id, { email: 'kept@example.org', contact_name: 'Kept Private' });
});

const privateDirectory = () => fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-export-file-'));

describe('registrations export --out: a new file of our own, renamed into place', () => {
  it("a file another user created at the target is replaced by one owned by whoever exports, mode 0600, so its old owner cannot read it", async () => {
    expect(process.getuid?.()).toBe(0); // the suite runs as root, which can give the file away
    const dir = privateDirectory();
    const file = path.join(dir, 'attendees.csv');
    fs.writeFileSync(file, 'planted by another user\n', { mode: 0o644 });
    fs.chownSync(file, NOBODY, NOBODY);
    fs.chmodSync(file, 0o644);

    const result = await cli(['export', '--event', slug, '--out', file]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const stat = fs.lstatSync(file);
    expect({ uid: stat.uid, gid: stat.gid, mode: stat.mode & 0o777, file: stat.isFile() }).toEqual({ uid: process.getuid?.(), gid: process.getgid?.(), mode: 0o600, file: true });
    expect(fs.readFileSync(file, 'utf8')).toContain('kept@example.org');
    // Nothing left behind next to it.
    expect(fs.readdirSync(dir)).toEqual(['attendees.csv']);
  });

  it('a symlink at the target is replaced by the file, not followed: the file it pointed to is untouched', async () => {
    const dir = privateDirectory();
    const elsewhere = path.join(privateDirectory(), 'precious.txt');
    fs.writeFileSync(elsewhere, 'not an export\n', { mode: 0o644 });
    const file = path.join(dir, 'attendees.csv');
    fs.symlinkSync(elsewhere, file);

    const result = await cli(['export', '--event', slug, '--out', file, '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ file, rows: 1, format: 'csv', mode: '0600' });
    expect(fs.readFileSync(elsewhere, 'utf8')).toBe('not an export\n');
    expect(fs.statSync(elsewhere).mode & 0o777).toBe(0o644);
    const stat = fs.lstatSync(file);
    expect(stat.isSymbolicLink()).toBe(false);
    expect(stat.mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(file, 'utf8')).toContain('kept@example.org');
  });

  it('a directory that does not exist exits 1 with "no such directory" and a suggestion, not an unexpected error; nothing is written', async () => {
    const missing = path.join(privateDirectory(), 'missing');
    const result = await cli(['export', '--event', slug, '--out', path.join(missing, 'x.csv')]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`eventops: no such directory: ${missing}\n`);
    expect(result.stderr).toContain(`suggestion: create it first (mkdir -p ${missing})`);
    expect(result.stderr).not.toContain('unexpected error');
    expect(fs.existsSync(missing)).toBe(false);

    const json = await cli(['export', '--event', slug, '--out', path.join(missing, 'x.csv'), '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr)).toMatchObject({ error: { code: 'export_no_directory', exitCode: 1 } });
  });

  it('a directory at the target exits 1 naming it, and leaves no temporary file in it', async () => {
    const dir = privateDirectory();
    const target = path.join(dir, 'attendees.csv');
    fs.mkdirSync(target);
    const result = await cli(['export', '--event', slug, '--out', target]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`eventops: ${target} is a directory`);
    expect(fs.readdirSync(dir)).toEqual(['attendees.csv']);
    expect(fs.readdirSync(target)).toEqual([]);
  });
});
