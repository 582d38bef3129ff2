/**
 * A small LRU: Map keeps insertion order; a hit moves the entry to the end. The entry is re-inserted
 * under the key string it was stored with, not the caller's freshly built one: an old Map pointing at
 * a per-request string would keep it alive into the old generation on every hit (GC pressure).
 */
export class Lru<V> {
  private readonly map = new Map<string, { key: string; value: V }>();
  constructor(private readonly max: number) {}
  get(k: string): V | undefined {
    const e = this.map.get(k);
    if (e === undefined) return undefined;
    this.map.delete(e.key);
    this.map.set(e.key, e);
    return e.value;
  }
  set(k: string, v: V): void {
    this.map.set(k, { key: k, value: v });
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }
  delete(k: string): void {
    this.map.delete(k);
  }
  get size(): number {
    return this.map.size;
  }
}
