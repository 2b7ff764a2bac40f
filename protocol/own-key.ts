/**
 * Assign `target[key] = value` for a key that came from the network: "__proto__" becomes an own
 * property instead of replacing the object's prototype.
 */
export function putOwn<T>(target: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}
