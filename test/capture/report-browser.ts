/**
 * Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: JSON
 * messages ended by NUL on fds 3 and 4), so the report's tests need no WebSocket client and no npm
 * dependency. It opens a page, waits for its load event, and collects what a person would see as
 * broken: uncaught exceptions, console errors, log errors (a CSP violation lands there) and every
 * network request other than the page itself.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';

export const CHROMIUM = process.env.ROCKETWIRE_CHROMIUM ?? '/usr/bin/chromium';

export function hasChromium(): boolean {
  return spawnSync(CHROMIUM, ['--version'], { stdio: 'ignore' }).status === 0;
}

interface Message {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
  sessionId?: string;
}

export interface PageErrors {
  exceptions: string[];
  consoleErrors: string[];
  logErrors: string[];
  /** URLs requested besides the page's own file. */
  requests: string[];
}

export class Browser {
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (r: Record<string, unknown>) => void; reject: (e: Error) => void }
  >();
  private readonly listeners: ((m: Message) => void)[] = [];
  private buffered = '';
  private exited = false;

  private constructor(
    private readonly child: ChildProcess,
    private readonly profile: string,
  ) {
    const out = child.stdio[4] as Readable;
    out.setEncoding('utf8');
    out.on('data', (chunk: string) => {
      this.buffered += chunk;
      let nul: number;
      while ((nul = this.buffered.indexOf('\0')) >= 0) {
        const m = JSON.parse(this.buffered.slice(0, nul)) as Message;
        this.buffered = this.buffered.slice(nul + 1);
        if (m.id !== undefined) {
          const p = this.pending.get(m.id);
          this.pending.delete(m.id);
          if (m.error) p?.reject(new Error(m.error.message));
          else p?.resolve(m.result ?? {});
        } else {
          for (const l of this.listeners) l(m);
        }
      }
    });
    child.once('exit', () => {
      this.exited = true;
      for (const p of this.pending.values()) p.reject(new Error('chromium exited'));
      this.pending.clear();
    });
  }

  static async launch(): Promise<Browser> {
    const profile = mkdtempSync(join(tmpdir(), 'rocketwire-chromium-'));
    const child = spawn(
      CHROMIUM,
      [
        '--headless',
        '--disable-gpu',
        '--no-sandbox',
        '--no-first-run',
        '--disable-extensions',
        '--remote-debugging-pipe',
        `--user-data-dir=${profile}`,
        'about:blank',
      ],
      { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] },
    );
    const b = new Browser(child, profile);
    await b.send('Target.getTargets');
    return b;
  }

  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Record<string, unknown>> {
    if (this.exited) return Promise.reject(new Error('chromium exited'));
    const id = this.nextId++;
    const msg = JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) });
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      (this.child.stdio[3] as Writable).write(msg + '\0');
    });
  }

  /**
   * Open `url` in a new page, wait for its load event, evaluate `expression` there (its value is
   * returned as JSON), and report what went wrong on the way; the page is closed afterwards.
   */
  async open<T>(
    url: string,
    expression: string,
    screenshot?: (png: Buffer) => void,
  ): Promise<{ value: T; errors: PageErrors }> {
    const { targetId } = (await this.send('Target.createTarget', { url: 'about:blank' })) as { targetId: string };
    const { sessionId } = (await this.send('Target.attachToTarget', { targetId, flatten: true })) as {
      sessionId: string;
    };
    const errors: PageErrors = { exceptions: [], consoleErrors: [], logErrors: [], requests: [] };
    let loaded!: () => void;
    const load = new Promise<void>((resolve) => (loaded = resolve));
    const listener = (m: Message): void => {
      if (m.sessionId !== sessionId) return;
      const p = m.params ?? {};
      if (m.method === 'Page.loadEventFired') loaded();
      else if (m.method === 'Runtime.exceptionThrown')
        errors.exceptions.push(JSON.stringify((p.exceptionDetails as Record<string, unknown>) ?? p));
      else if (m.method === 'Runtime.consoleAPICalled' && (p.type === 'error' || p.type === 'assert'))
        errors.consoleErrors.push(JSON.stringify(p.args));
      else if (m.method === 'Log.entryAdded') {
        const e = p.entry as { level: string; text: string; url?: string };
        if (e.level === 'error') errors.logErrors.push(`${e.text}${e.url ? ' ' + e.url : ''}`);
      } else if (m.method === 'Network.requestWillBeSent') {
        const u = (p.request as { url: string }).url;
        if (u !== url) errors.requests.push(u);
      }
    };
    this.listeners.push(listener);
    try {
      for (const domain of ['Page', 'Runtime', 'Log', 'Network']) await this.send(`${domain}.enable`, {}, sessionId);
      await this.send('Page.navigate', { url }, sessionId);
      await load;
      if (screenshot) {
        const { data } = (await this.send(
          'Page.captureScreenshot',
          { format: 'png', captureBeyondViewport: true },
          sessionId,
        )) as { data: string };
        screenshot(Buffer.from(data, 'base64'));
      }
      const r = (await this.send(
        'Runtime.evaluate',
        { expression, returnByValue: true, awaitPromise: true },
        sessionId,
      )) as {
        result: { value: T };
        exceptionDetails?: unknown;
      };
      if (r.exceptionDetails) throw new Error(`evaluate failed: ${JSON.stringify(r.exceptionDetails)}`);
      return { value: r.result.value, errors };
    } finally {
      this.listeners.splice(this.listeners.indexOf(listener), 1);
      await this.send('Target.closeTarget', { targetId }).catch(() => {});
    }
  }

  async close(): Promise<void> {
    if (!this.exited) {
      const exit = new Promise((resolve) => this.child.once('exit', resolve));
      await this.send('Browser.close').catch(() => {});
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
      await exit;
      clearTimeout(timer);
    }
    rmSync(this.profile, { recursive: true, force: true });
  }
}
