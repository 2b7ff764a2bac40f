import { EventEmitter } from 'node:events';
import t from 'tap';
import { TypedEmitter } from '../../lib/emitter.js';

interface Events {
  send: [event: { topic: string }];
  close: [reason?: Error];
  pair: [a: number, b: string];
}

t.test('on() returns its remover; listening() follows the listeners', (t) => {
  const e = new TypedEmitter<Events>();
  const seen: string[] = [];
  t.notOk(e.listening('send'), 'nobody listens at first');
  t.equal(e.emit('send', { topic: 'T' }), false, 'emit without listeners says so');
  const remove = e.on('send', (ev) => seen.push(ev.topic));
  t.ok(e.listening('send'));
  t.notOk(e.listening('close'), 'per event');
  t.equal(e.emit('send', { topic: 'A' }), true);
  remove();
  t.notOk(e.listening('send'), 'the remover removed it');
  e.emit('send', { topic: 'B' });
  remove();
  t.same(seen, ['A'], 'removing twice is harmless');
  t.end();
});

t.test('once runs once, and its remover or off() removes it before then', (t) => {
  const e = new TypedEmitter<Events>();
  let n = 0;
  e.once('close', () => n++);
  e.emit('close');
  e.emit('close');
  t.equal(n, 1);
  t.notOk(e.listening('close'));
  const f = (): void => void n++;
  const remove = e.once('close', f);
  remove();
  e.once('close', f);
  e.off('close', f);
  e.emit('close');
  t.equal(n, 1, 'neither ran');
  t.end();
});

t.test('order, duplicates, changes during an emit and throwing listeners are those of EventEmitter', (t) => {
  const run = (em: {
    on(e: string, l: (...a: unknown[]) => void): unknown;
    off(e: string, l: (...a: unknown[]) => void): unknown;
    emit(e: string, ...a: unknown[]): boolean;
  }): string[] => {
    const log: string[] = [];
    const twice = (): void => void log.push('twice');
    const late = (): void => void log.push('late');
    const removed = (): void => void log.push('removed');
    em.on('pair', (a, b) => log.push(`first ${String(a)} ${String(b)}`));
    em.on('pair', twice);
    em.on('pair', () => {
      log.push('adder');
      em.on('pair', late);
      em.off('pair', removed);
    });
    em.on('pair', removed);
    em.on('pair', twice);
    em.emit('pair', 1, 'x');
    em.off('pair', twice);
    em.emit('pair', 2, 'y');
    em.on('pair', () => {
      throw new RangeError('boom');
    });
    em.on('pair', () => log.push('after the throw'));
    try {
      em.emit('pair', 3, 'z');
    } catch (err) {
      log.push(`caught ${(err as Error).message}`);
    }
    return log;
  };
  const typed = run(new TypedEmitter<Events>() as unknown as Parameters<typeof run>[0]);
  const node = run(new EventEmitter() as unknown as Parameters<typeof run>[0]);
  t.same(typed, node);
  t.same(typed.slice(0, 5), ['first 1 x', 'twice', 'adder', 'removed', 'twice'], 'a snapshot per emit');
  t.end();
});

t.test('isolate: a listener that throws is reported and the others run', (t) => {
  const errors: unknown[] = [];
  const e = new TypedEmitter<Events>({ isolate: (err, event) => errors.push([event, (err as Error).message]) });
  let after = 0;
  e.on('close', () => {
    throw new RangeError('listener failed');
  });
  e.on('close', () => after++);
  t.equal(e.emit('close'), true);
  t.equal(after, 1);
  t.same(errors, [['close', 'listener failed']]);
  t.end();
});

t.test('onListen is told of every listener added', (t) => {
  const told: string[] = [];
  const e = new TypedEmitter<Events>({ onListen: (event) => told.push(event) });
  e.on('send', () => {});
  e.once('close', () => {});
  t.same(told, ['send', 'close']);
  t.equal(e.listenerCount('send'), 1);
  e.removeAllListeners();
  t.notOk(e.listening('send'));
  t.end();
});

t.test('typed: a listener must take the event map arguments', (t) => {
  const e = new TypedEmitter<Events>();
  e.on('pair', (a: number, b: string) => void [a, b]);
  // @ts-expect-error the payload of 'send' is not a number
  e.on('send', (n: number) => void n);
  // @ts-expect-error no such event
  e.on('nope', () => {});
  // @ts-expect-error emit checks the payload too
  e.emit('pair', 'x', 1);
  t.pass('compiles as typed');
  t.end();
});

t.test('a subclass emits its own events', (t) => {
  class Conn extends TypedEmitter<{ close: [reason?: Error] }> {
    close(): void {
      this.emit('close', new RangeError('gone'));
    }
  }
  const c = new Conn();
  let reason: Error | undefined;
  c.once('close', (r) => (reason = r));
  c.close();
  t.equal(reason?.message, 'gone');
  t.end();
});
