const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * When the public address (AUTH_URL, else APP_URL) names this machine itself but another port than the one
 * `serve` listens on, every link in emails and pages leads nowhere: `init` writes AUTH_URL for port 3000, and
 * `serve --port 3811` does not change it. Says what to set; undefined when the links can reach this server
 * (a real host name is taken to be a proxy in front, whose port we cannot judge).
 */
export function publicUrlPortMismatch(publicUrl: string | undefined, listeningPort: number): string | undefined {
  if (publicUrl === undefined) return undefined;
  const url = new URL(publicUrl);
  if (!LOOPBACK.has(url.hostname)) return undefined;
  const linkedPort = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  if (linkedPort === listeningPort) return undefined;
  const fixed = new URL(publicUrl);
  fixed.port = String(listeningPort);
  return `links in emails and pages point at ${url.origin}, but this server listens on port ${listeningPort}: set AUTH_URL to ${fixed.origin}${url.pathname === '/' ? '' : url.pathname} (or serve on port ${linkedPort})`;
}
