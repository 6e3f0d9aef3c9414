import ipaddr from 'ipaddr.js';

/** The one key every address that cannot be read shares: each its own key would be a limit per made-up string. */
export const UNPARSEABLE_CLIENT = 'unparseable';

/**
 * The IPv6 prefix one client is counted by: the /48, the block an end site may be given (RFC 6177 and the
 * address registries' policies); a home's /56 and every /64 are parts of one. Counting by /56 let one holder
 * of a /48 post as 256 clients.
 */
export const IPV6_CLIENT_PREFIX = 48;

/** Put before the client key of a request from one of the church's own networks (CHURCH_NETWORKS). */
export const CHURCH_CLIENT_PREFIX = 'church:';

/**
 * The client a per-client limit counts: an IPv4 address as it is (an IPv4-mapped IPv6 one as IPv4), an IPv6
 * address by its /48, the block one site is normally given; counting each /56, /64 or address of it apart
 * would let one client rotate through 65,536 networks and 2^80 addresses. Some proxies append the client's port
 * (`203.0.113.5:40000`, `[2001:db8::1]:443`), new on every connection, so it is dropped first.
 */
export function clientKey(ip: string): string {
  return keyOf(parsedAddress(ip));
}

function keyOf(address: ipaddr.IPv4 | ipaddr.IPv6 | undefined): string {
  if (!address) return UNPARSEABLE_CLIENT;
  if (address.kind() === 'ipv4') return address.toString();
  const network = ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${IPV6_CLIENT_PREFIX}`);
  return `${network.toString()}/${IPV6_CLIENT_PREFIX}`;
}

/** A public request's client: its key, and whether it comes from one of the church's own networks. */
export interface PublicClient {
  key: string;
  churchNetwork: boolean;
}

/**
 * The client a public request counts as. From one of the church's own networks (CHURCH_NETWORKS, CIDR ranges
 * as loadConfig wrote them) its key is marked (`church:` + clientKey), so its counts are its own and never
 * shared with a neighbour in the same /48, and the limits that apply to it can tell it apart.
 */
export function publicClient(ip: string, churchNetworks: readonly string[]): PublicClient {
  // Asked on every public request (the rate limit's key): the address is parsed once, the ranges once per list.
  const address = parsedAddress(ip);
  const key = keyOf(address);
  const churchNetwork = address !== undefined && churchNetworks.length > 0 && parsedRanges(churchNetworks).some((range) => inRange(address, range));
  return churchNetwork ? { key: `${CHURCH_CLIENT_PREFIX}${key}`, churchNetwork } : { key, churchNetwork };
}

/** Whether a client key is one publicClient marked as the church's network. */
export function isChurchClientKey(key: string): boolean {
  return key.startsWith(CHURCH_CLIENT_PREFIX);
}

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];
const rangesOfList = new WeakMap<readonly string[], Range[]>();

/** The CIDR ranges of a list (the configuration's CHURCH_NETWORKS), parsed on first use. */
function parsedRanges(list: readonly string[]): Range[] {
  let ranges = rangesOfList.get(list);
  if (!ranges) {
    ranges = list.map((range) => ipaddr.parseCIDR(range));
    rangesOfList.set(list, ranges);
  }
  return ranges;
}

function inRange(address: ipaddr.IPv4 | ipaddr.IPv6, [network, bits]: Range): boolean {
  return address.kind() === network.kind() && address.match([network, bits]);
}

/** The address without a port, IPv4-mapped IPv6 read as IPv4; undefined when it is not an address. */
function parsedAddress(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const host = withoutPort(ip.trim());
  return ipaddr.isValid(host) ? ipaddr.process(host) : undefined;
}

/** `a.b.c.d:port` and `[v6]:port` (or `[v6]`) without the port; a bare IPv6 address, colons and all, as it is. */
function withoutPort(ip: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d*)?$/.exec(ip);
  if (bracketed) return bracketed[1] ?? '';
  const ipv4WithPort = /^([\d.]+):\d*$/.exec(ip);
  return ipv4WithPort?.[1] ?? ip;
}
