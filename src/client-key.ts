import ipaddr from 'ipaddr.js';

/** The one key every address that cannot be read shares: each its own key would be a limit per made-up string. */
export const UNPARSEABLE_CLIENT = 'unparseable';

/** The IPv6 prefix one client is counted by: a home or small office is usually given a /56 (256 /64 networks). */
export const IPV6_CLIENT_PREFIX = 56;

/**
 * The client a per-client limit counts: an IPv4 address as it is (an IPv4-mapped IPv6 one as IPv4), an IPv6
 * address by its /56, the block one home network is normally given; counting each /64 or address of it apart
 * would let one client rotate through 256 networks and 2^72 addresses. Some proxies append the client's port
 * (`203.0.113.5:40000`, `[2001:db8::1]:443`), new on every connection, so it is dropped first.
 */
export function clientKey(ip: string): string {
  const host = withoutPort(ip.trim());
  if (!ipaddr.isValid(host)) return UNPARSEABLE_CLIENT;
  const address = ipaddr.process(host);
  if (address.kind() === 'ipv4') return address.toString();
  const network = ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${IPV6_CLIENT_PREFIX}`);
  return `${network.toString()}/${IPV6_CLIENT_PREFIX}`;
}

/** `a.b.c.d:port` and `[v6]:port` (or `[v6]`) without the port; a bare IPv6 address, colons and all, as it is. */
function withoutPort(ip: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d*)?$/.exec(ip);
  if (bracketed) return bracketed[1] ?? '';
  const ipv4WithPort = /^([\d.]+):\d*$/.exec(ip);
  return ipv4WithPort?.[1] ?? ip;
}
