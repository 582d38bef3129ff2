import type { Versioned, VersionedStore } from '../versioned-store.js';

/** The embedded adapter of a versioned store: a Map and a counter. */
export class MemoryVersionedStore<T> implements VersionedStore<T> {
  private readonly entries = new Map<string, Versioned<T>>();
  private v = 0;

  constructor(initial: Iterable<readonly [string, T]> = []) {
    for (const [id, value] of initial) this.set(id, value);
  }

  get version(): number {
    return this.v;
  }

  get(id: string): Versioned<T> | undefined {
    return this.entries.get(id);
  }

  ids(): string[] {
    return [...this.entries.keys()];
  }

  put(id: string, value: T): Promise<number> {
    return Promise.resolve(this.set(id, value));
  }

  delete(id: string): Promise<boolean> {
    if (!this.entries.delete(id)) return Promise.resolve(false);
    this.v++;
    return Promise.resolve(true);
  }

  private set(id: string, value: T): number {
    const version = ++this.v;
    this.entries.set(id, { value, version });
    return version;
  }
}
