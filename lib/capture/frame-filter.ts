import { RequestCode, requestCodeName, ResponseCode, responseCodeName } from '../../protocol/codes.js';
import { isResponse } from '../../protocol/command.js';
import type { DecodedFrame } from './capture-options.js';
import type { FrameDescription } from './describe.js';
import { FilterSyntaxError } from './errors.js';
import { requestTopicAndGroup } from './stats.js';

/**
 * `--filter` terms: `code=N|NAME`, `topic=T`, `group=G`, `addr=IP[:PORT]`; a bare number or code
 * name is a code, a bare address an addr. Terms of one kind are alternatives (OR); terms of
 * different kinds must all hold (AND). A response matches a code through the request it answers,
 * or by its own response code name.
 */
export class FrameFilter {
  readonly codes = new Set<number>();
  readonly codeNames = new Set<string>();
  readonly topics = new Set<string>();
  readonly groups = new Set<string>();
  readonly addrs = new Set<string>();

  constructor(terms: string[]) {
    for (const raw of terms.flatMap((t) => t.split(','))) {
      const term = raw.trim();
      if (term === '') continue;
      const eq = term.indexOf('=');
      const key = eq > 0 ? term.slice(0, eq).toLowerCase() : '';
      const value = eq > 0 ? term.slice(eq + 1) : term;
      if (key === 'code' || (key === '' && (/^-?\d+$/.test(value) || isCodeName(value)))) this.addCode(value);
      else if (key === 'topic') this.topics.add(value);
      else if (key === 'group') this.groups.add(value);
      else if (key === 'addr' || key === 'address' || key === 'host' || (key === '' && looksLikeAddress(value)))
        this.addrs.add(normaliseAddr(value));
      else if (key === '')
        throw new FilterSyntaxError(`filter "${term}" is not a code or address: write topic=${term} or group=${term}`);
      else throw new FilterSyntaxError(`unknown filter key "${key}" (use code, topic, group or addr)`);
    }
  }

  get empty(): boolean {
    return this.codes.size + this.codeNames.size + this.topics.size + this.groups.size + this.addrs.size === 0;
  }

  /** Needs the frame's description (message topics) to decide on topics. */
  get needsDescription(): boolean {
    return this.topics.size > 0;
  }

  private addCode(v: string): void {
    if (/^-?\d+$/.test(v)) this.codes.add(Number(v));
    else if (isCodeName(v)) this.codeNames.add(v.toUpperCase());
    else throw new FilterSyntaxError(`unknown request or response code "${v}"`);
  }

  matches(f: DecodedFrame, d?: FrameDescription): boolean {
    const cmd = f.cmd;
    const response = isResponse(cmd);
    const reqCode = response ? f.request?.code : cmd.code;
    if (this.codes.size > 0 || this.codeNames.size > 0) {
      let ok = reqCode !== undefined && this.codes.has(reqCode);
      if (!ok && this.codeNames.size > 0) {
        ok =
          (reqCode !== undefined && this.codeNames.has(requestCodeName(reqCode))) ||
          (response && this.codeNames.has(responseCodeName(cmd.code)));
      }
      if (!ok) return false;
    }
    if (this.addrs.size > 0) {
      if (!(matchAddr(this.addrs, f.src) || matchAddr(this.addrs, f.dst))) return false;
    }
    if (this.topics.size > 0 || this.groups.size > 0) {
      const ext = response ? (f.request?.extFields ?? null) : cmd.extFields;
      const { topic, group } = reqCode === undefined ? {} : requestTopicAndGroup(reqCode, ext);
      if (this.groups.size > 0 && !(group !== undefined && this.groups.has(group))) return false;
      if (this.topics.size > 0) {
        let ok = topic !== undefined && this.topics.has(topic);
        if (!ok && d?.messages) ok = d.messages.some((m) => this.topics.has(m.topic));
        if (!ok) return false;
      }
    }
    return true;
  }
}

function isCodeName(v: string): boolean {
  const u = v.toUpperCase();
  return Object.hasOwn(RequestCode, u) || Object.hasOwn(ResponseCode, u);
}

function looksLikeAddress(v: string): boolean {
  return (
    /^\d+\.\d+\.\d+\.\d+(:\d+)?$/.test(v) ||
    /^\[[0-9a-fA-F:.]+\](:\d+)?$/.test(v) ||
    /^[0-9a-fA-F]*:[0-9a-fA-F:]*:[0-9a-fA-F:.]*$/.test(v)
  );
}

function normaliseAddr(v: string): string {
  // A bare IPv6 address without brackets is a host.
  if (!v.startsWith('[') && v.split(':').length > 2) return `[${v.toLowerCase()}]`;
  return v.toLowerCase();
}

function matchAddr(addrs: Set<string>, a: string | null): boolean {
  if (a === null) return false;
  if (addrs.has(a)) return true;
  const host = a.slice(0, a.lastIndexOf(':'));
  return addrs.has(host);
}
