import ipaddr from 'ipaddr.js';

/** The shortest prefixes CHURCH_NETWORKS takes: a church's own network, never a provider's (or everyone's, /0). */
export const SHORTEST_CHURCH_PREFIX = { ipv4: 16, ipv6: 32 } as const;

/** The form posts a minute one client on a church network may make, when CHURCH_NETWORK_FORM_POSTS_PER_MINUTE is unset. */
export const DEFAULT_CHURCH_NETWORK_FORM_POSTS_PER_MINUTE = 120;

export const CHURCH_NETWORKS_EXPECTED =
  'comma-separated IPv4 or IPv6 networks of the church itself in CIDR form, such as 203.0.113.7/32,2001:db8:5::/48: ' +
  `each written as its network address (203.0.113.0/24, not 203.0.113.7/24), a bare address taken as /32 or /128, no prefix shorter than /${SHORTEST_CHURCH_PREFIX.ipv4} (IPv4) or /${SHORTEST_CHURCH_PREFIX.ipv6} (IPv6), no zone (%eth0), no empty entry`;

/**
 * CHURCH_NETWORKS as the server matches it: each entry `network/prefix` (a bare address as /32 or /128).
 * Undefined when any entry is not exactly a network: the whole value is refused, never half taken. Strict
 * because a mistake here lifts the per-connection caps for whoever it names: an address with host bits
 * set (`203.0.113.7/24`) may be a typo for a /32, and a prefix shorter than a church could own (`0.0.0.0/0`)
 * would lift them for everyone.
 */
export function churchNetworks(value: string): readonly string[] | undefined {
  const ranges = value.split(',').map((entry) => churchNetwork(entry.trim()));
  return ranges.every((range): range is string => range !== undefined) ? ranges : undefined;
}

function churchNetwork(entry: string): string | undefined {
  const [address = '', prefix, ...rest] = entry.split('/');
  if (rest.length > 0 || entry.includes('%')) return undefined;
  const ipv4 = ipaddr.IPv4.isValidFourPartDecimal(address);
  if (!ipv4 && !(address.includes(':') && ipaddr.IPv6.isValid(address))) return undefined;
  // An IPv4-mapped IPv6 range would never match: the server reads such a client address as IPv4.
  if (!ipv4 && ipaddr.IPv6.parse(address).isIPv4MappedAddress()) return undefined;
  const maxBits = ipv4 ? 32 : 128;
  if (prefix !== undefined && !/^\d{1,3}$/.test(prefix)) return undefined;
  const bits = prefix === undefined ? maxBits : Number(prefix);
  if (bits > maxBits || bits < (ipv4 ? SHORTEST_CHURCH_PREFIX.ipv4 : SHORTEST_CHURCH_PREFIX.ipv6)) return undefined;
  const cidr = `${address}/${bits}`;
  const network = ipv4 ? ipaddr.IPv4.networkAddressFromCIDR(cidr) : ipaddr.IPv6.networkAddressFromCIDR(cidr);
  const given = ipv4 ? ipaddr.IPv4.parse(address) : ipaddr.IPv6.parse(address);
  if (network.toString() !== given.toString()) return undefined;
  return `${network.toString()}/${bits}`;
}
