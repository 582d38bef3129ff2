/**
 * IP addresses as bytes, and the ranges that are not public: what the host guard (host-guard.ts)
 * refuses unless an operator trusts them.
 */
import net from 'node:net';

/** 4 bytes (IPv4) or 16 bytes (IPv6). */
export type Bytes = Uint8Array;

export interface Net {
  bytes: Bytes;
  prefix: number;
}

interface Range extends Net {
  label: string;
}

export function stripBrackets(s: string): string {
  return s.startsWith('[') && s.endsWith(']') ? s.slice(1, -1) : s;
}

function parseV4(s: string): Bytes | null {
  if (net.isIPv4(s) === false) return null;
  return Uint8Array.from(s.split('.').map(Number));
}

function parseV6(s: string): Bytes | null {
  if (net.isIPv6(s) === false) return null;
  const pct = s.indexOf('%');
  if (pct >= 0) s = s.slice(0, pct);
  const groups: number[] = [];
  const parseGroups = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    const pieces = part.split(':');
    for (let i = 0; i < pieces.length; i++) {
      const p = pieces[i];
      if (i === pieces.length - 1 && p.includes('.')) {
        const v4 = parseV4(p);
        if (!v4) return null;
        out.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(p)) return null;
        out.push(parseInt(p, 16));
      }
    }
    return out;
  };
  const dbl = s.indexOf('::');
  if (dbl >= 0) {
    const head = parseGroups(s.slice(0, dbl));
    const tail = parseGroups(s.slice(dbl + 2));
    if (!head || !tail || head.length + tail.length > 7) return null;
    groups.push(...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail);
  } else {
    const all = parseGroups(s);
    if (!all || all.length !== 8) return null;
    groups.push(...all);
  }
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 0xff;
  });
  return bytes;
}

/** Parses an IPv4 or IPv6 address (brackets and zone id allowed); null when it is not one. */
export function parseIp(s: string): Bytes | null {
  s = stripBrackets(s.trim());
  return parseV4(s) ?? parseV6(s);
}

export function inNet(addr: Bytes, n: Net): boolean {
  if (addr.length !== n.bytes.length) return false;
  let bits = n.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((addr[i] & mask) !== (n.bytes[i] & mask)) return false;
  }
  return true;
}

function range(cidr: string, label: string): Range {
  const [ip, len] = cidr.split('/');
  const bytes = parseIp(ip);
  if (!bytes) throw new Error(`bad built-in range ${cidr}`);
  return { bytes, prefix: Number(len), label };
}

/** Non-public IPv4 ranges (IANA special-purpose registry, not globally reachable). First match wins. */
const V4_RANGES: Range[] = [
  range('0.0.0.0/8', 'unspecified'),
  range('10.0.0.0/8', 'private'),
  range('100.64.0.0/10', 'shared (CGNAT)'),
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'link-local'),
  range('172.16.0.0/12', 'private'),
  range('192.0.0.0/24', 'reserved'),
  range('192.0.2.0/24', 'documentation'),
  range('192.88.99.0/24', 'reserved'),
  range('192.168.0.0/16', 'private'),
  range('198.18.0.0/15', 'benchmarking'),
  range('198.51.100.0/24', 'documentation'),
  range('203.0.113.0/24', 'documentation'),
  range('224.0.0.0/4', 'multicast'),
  range('255.255.255.255/32', 'broadcast'),
  range('240.0.0.0/4', 'reserved'),
];

/** Non-public IPv6 ranges inside 2000::/3 or otherwise worth a precise label. First match wins. */
const V6_RANGES: Range[] = [
  range('::/128', 'unspecified'),
  range('::1/128', 'loopback'),
  range('64:ff9b:1::/48', 'reserved'),
  range('100::/64', 'reserved'),
  range('2001:2::/48', 'benchmarking'),
  range('2001:db8::/32', 'documentation'),
  range('3fff::/20', 'documentation'),
  range('fc00::/7', 'unique-local'),
  range('fe80::/10', 'link-local'),
  range('fec0::/10', 'site-local'),
  range('ff00::/8', 'multicast'),
];

const V4_MAPPED = range('::ffff:0:0/96', '');
const NAT64 = range('64:ff9b::/96', '');
const SIX_TO_FOUR = range('2002::/16', '');
const GLOBAL_UNICAST = range('2000::/3', '');

/** IPv4-mapped IPv6 is the IPv4 address (the kernel connects to it over IPv4). */
export function unmap(addr: Bytes): Bytes {
  return addr.length === 16 && inNet(addr, V4_MAPPED) ? addr.slice(12) : addr;
}

/** The IPv4 address a translated/tunnelled IPv6 address (NAT64, 6to4) leads to. */
export function embeddedV4(addr: Bytes): Bytes | null {
  if (addr.length !== 16) return null;
  if (inNet(addr, NAT64)) return addr.slice(12);
  if (inNet(addr, SIX_TO_FOUR)) return addr.slice(2, 6);
  return null;
}

/** Why `addr` (own range only, not what it embeds) is not public, or null when it is public. */
export function ownLabel(addr: Bytes): string | null {
  if (addr.length === 4) return V4_RANGES.find((r) => inNet(addr, r))?.label ?? null;
  const hit = V6_RANGES.find((r) => inNet(addr, r));
  if (hit) return hit.label;
  // NAT64's well-known prefix is public in itself (its embedded IPv4 is checked separately);
  // anything else outside global unicast 2000::/3 is unallocated or special.
  if (inNet(addr, NAT64) || inNet(addr, GLOBAL_UNICAST)) return null;
  return 'reserved';
}

/** A GATEWAY_TRUSTED_HOSTS entry that is an IP or a CIDR → the network it trusts; throws naming a bad entry. */
export function parseTrustedNet(entry: string): Net {
  const slash = entry.indexOf('/');
  const ipPart = slash >= 0 ? entry.slice(0, slash) : entry;
  const lenPart = slash >= 0 ? entry.slice(slash + 1) : undefined;
  const bytes = parseIp(ipPart);
  if (!bytes) throw new Error(`GATEWAY_TRUSTED_HOSTS: invalid CIDR "${entry}" (not an IP address before "/").`);
  const max = bytes.length * 8;
  let prefix = max;
  if (lenPart !== undefined) {
    if (!/^\d{1,3}$/.test(lenPart) || Number(lenPart) > max) {
      throw new Error(`GATEWAY_TRUSTED_HOSTS: invalid CIDR "${entry}" (prefix length must be 0-${max}).`);
    }
    prefix = Number(lenPart);
  }
  // ::ffff:a.b.c.d/104 and friends are IPv4 networks: addresses are unmapped before matching.
  if (bytes.length === 16 && prefix >= 96 && inNet(bytes, V4_MAPPED)) return { bytes: bytes.slice(12), prefix: prefix - 96 };
  return { bytes, prefix };
}
