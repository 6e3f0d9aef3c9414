import { describe, expect, it } from 'vitest';
import { publicUrlPortMismatch } from '../../src/cli/public-url-port.js';

describe('links that cannot reach the server', () => {
  it('AUTH_URL on this machine with another port than serve listens on is named, with the address to set', () => {
    expect(publicUrlPortMismatch('http://127.0.0.1:3000', 3811)).toBe(
      'links in emails and pages point at http://127.0.0.1:3000, but this server listens on port 3811: set AUTH_URL to http://127.0.0.1:3811 (or serve on port 3000)',
    );
    expect(publicUrlPortMismatch('http://localhost', 3000)).toContain('set AUTH_URL to http://localhost:3000 (or serve on port 80)');
    expect(publicUrlPortMismatch('http://[::1]:3000/church', 4000)).toContain('set AUTH_URL to http://[::1]:4000/church');
  });

  it('the same port, a real host name (a proxy in front) or no public address is not a mismatch', () => {
    expect(publicUrlPortMismatch('http://127.0.0.1:3000', 3000)).toBeUndefined();
    expect(publicUrlPortMismatch('https://events.gracechurch.org', 3000)).toBeUndefined();
    expect(publicUrlPortMismatch('http://192.168.1.20:3000', 3811)).toBeUndefined();
    expect(publicUrlPortMismatch(undefined, 3000)).toBeUndefined();
  });
});
