import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SHUTDOWN_GRACE_MS } from '../../src/cli/commands/serve.js';
import { EXIT } from '../../src/errors.js';
import { ROOT } from '../support/cli.js';

const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** The README and every Markdown file in docs/. */
const DOCS = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((file) => file.endsWith('.md')).map((file) => `docs/${file}`)];

/** A Markdown link of `file`: its target relative to the repository ('' for one inside the file) and its #anchor. */
function linksOf(file: string): Array<{ file: string; target: string; anchor?: string }> {
  return [...read(file).matchAll(/\]\(([^)\s]*)\)/g)]
    .map((m) => m[1] as string)
    .filter((link) => !/^[a-z]+:/.test(link))
    .map((link) => {
      const [target = '', anchor] = link.split('#');
      return { file, target: target === '' ? '' : path.posix.normalize(path.posix.join(path.posix.dirname(file), target)).replace(/\/$/, ''), anchor };
    });
}

/** The anchors GitHub gives the headings of a Markdown file. */
function headingsOf(file: string): Set<string> {
  const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\w\- ]/g, '').replace(/ /g, '-');
  return new Set([...read(file).matchAll(/^#{1,4} (.+)$/gm)].map((m) => slug(m[1] as string)));
}

/** `Key=value` lines of a systemd unit, the last one winning as systemd reads them. */
function unitSettings(text: string): Map<string, string> {
  const settings = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line.trim());
    if (match) settings.set(match[1] as string, (match[2] as string).trim());
  }
  return settings;
}

describe('deployment files', () => {
  it('every file the README and the guides link to exists in the repository', () => {
    const links = DOCS.flatMap((file) => linksOf(file)).filter((link) => link.target !== '');
    expect(links.map((link) => link.target)).toContain('docs/deploy/eventops.service');
    expect(links.filter((link) => !fs.existsSync(path.join(ROOT, link.target))).map((link) => `${link.file}: ${link.target}`)).toEqual([]);
  });

  it("every section the README and the guides link to (#…) is one of the target's headings, as GitHub names them", () => {
    const links = DOCS.flatMap((file) => linksOf(file)).filter((link) => link.anchor !== undefined);
    expect(links.map((link) => `${link.target || link.file}#${link.anchor}`)).toContain('docs/operations.md#backups-restoring-and-upgrading');
    const broken = links.filter((link) => !headingsOf(link.target || link.file).has(link.anchor as string));
    expect(broken.map((link) => `${link.file}: ${link.target || link.file}#${link.anchor}`)).toEqual([]);
  });

  it('the systemd unit runs `eventops serve` in the directory of .env, restarts it after a crash but not on a configuration error, and outwaits its graceful stop', () => {
    const unit = unitSettings(read('docs/deploy/eventops.service'));
    expect(unit.get('ExecStart')).toMatch(/\/eventops serve$/);
    expect(unit.get('WorkingDirectory')).toMatch(/^\//);
    expect(unit.get('User')).toBeTruthy();
    expect(unit.get('Restart')).toBe('on-failure');
    expect(unit.get('RestartPreventExitStatus')).toBe(String(EXIT.config));
    expect(Number(unit.get('TimeoutStopSec'))).toBeGreaterThan(SHUTDOWN_GRACE_MS / 1000);
  });

  it('the proxy examples forward to serve on its default 127.0.0.1:3000 with the client address and scheme (for TRUST_PROXY)', () => {
    const nginx = read('docs/deploy/nginx.conf');
    expect(nginx).toContain('proxy_pass http://127.0.0.1:3000;');
    expect(nginx).toContain('proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;');
    expect(nginx).toContain('proxy_set_header X-Forwarded-Proto $scheme;');
    expect(nginx).toContain('TRUST_PROXY=true');
    const caddy = read('docs/deploy/Caddyfile');
    expect(caddy).toMatch(/^\s*reverse_proxy 127\.0\.0\.1:3000$/m);
    expect(caddy).toContain('TRUST_PROXY=true');
  });

  it("logrotate rotates the log crontab.example appends to and recreates it readable by no one else (0600 or 0640)", () => {
    const logrotate = read('docs/deploy/eventops.logrotate');
    const logs = new Set([...read('crontab.example').matchAll(/>> (\S+) 2>&1$/gm)].map((m) => m[1]));
    expect([...logs]).toHaveLength(1);
    expect(logrotate).toMatch(new RegExp(`^${[...logs][0]} \\{$`, 'm'));
    expect(logrotate).toMatch(/^\s*create 06[04]0 \S+ \S+$/m);
  });
});
