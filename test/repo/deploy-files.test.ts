import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SHUTDOWN_GRACE_MS } from '../../src/cli/commands/serve.js';
import { EXIT } from '../../src/errors.js';
import { ROOT } from '../support/cli.js';

const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

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
  it('every file the README links to exists in the repository', () => {
    const links = [...read('README.md').matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1] as string).filter((link) => !/^[a-z]+:/.test(link));
    expect(links).toContain('docs/deploy/eventops.service');
    expect(links.filter((link) => !fs.existsSync(path.join(ROOT, link)))).toEqual([]);
  });

  it("every section the README links to (#…) is one of its headings, as GitHub names them", () => {
    const readme = read('README.md');
    const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\w\- ]/g, '').replace(/ /g, '-');
    const headings = new Set([...readme.matchAll(/^#{2,4} (.+)$/gm)].map((m) => slug(m[1] as string)));
    const anchors = [...readme.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1] as string);
    expect(anchors).toContain('backups-restoring-and-upgrading');
    expect(anchors.filter((anchor) => !headings.has(anchor))).toEqual([]);
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
