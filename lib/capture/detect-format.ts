import type { InputFormat } from './capture-options.js';
import { PCAP_MAGIC_MICRO, PCAP_MAGIC_NANO } from './pcap-reader.js';

/** pcap and pcapng by magic number; anything else is taken as concatenated frames. */
export function detectFormat(head: Buffer): InputFormat {
  if (head.length < 4) return 'raw';
  const be = head.readUInt32BE(0);
  const le = head.readUInt32LE(0);
  if (be === PCAP_MAGIC_MICRO || be === PCAP_MAGIC_NANO || le === PCAP_MAGIC_MICRO || le === PCAP_MAGIC_NANO)
    return 'pcap';
  if (be === 0x0a0d0d0a) return 'pcapng';
  return 'raw';
}
