import * as fs from 'node:fs';

/**
 * The pid of the process listening on `addr` ("127.0.0.1:port"), found in /proc/net/tcp{,6} and
 * the processes' socket links; null where /proc cannot tell. A real broker's JVM is found so, for
 * its CPU beside a bench's figures.
 */
export function pidListeningOn(addr: string): number | null {
  try {
    const port = Number(addr.split(':').pop());
    const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
    // A JVM listening on every interface shows in tcp6 (an IPv4-mapped wildcard), else in tcp.
    const inode = ['/proc/net/tcp6', '/proc/net/tcp']
      .flatMap((f) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n') : []))
      .map((l) => l.trim().split(/\s+/))
      .find((f) => f[1]?.endsWith(`:${hexPort}`) && f[3] === '0A')?.[9];
    if (!inode) return null;
    for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      let fds: string[];
      try {
        fds = fs.readdirSync(`/proc/${pid}/fd`);
      } catch {
        continue;
      }
      for (const fd of fds) {
        try {
          if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`) return Number(pid);
        } catch {
          // the descriptor closed meanwhile
        }
      }
    }
  } catch {
    // no /proc
  }
  return null;
}
