/**
 * Values made once per (id, variant) and reused: the constant JSON text or log entry of a check or
 * hook for each of its few outcomes, so a request writes its results from shared parts instead of
 * building them again. Bounded, since ids come from configs, which clients can vary: past `maxIds`
 * distinct ids the table starts over, and an id longer than `maxIdLength` is never kept (its value
 * is made each time), so what the table holds stays small whatever ids clients send.
 */
export class IdVariants<T> {
  private byId = new Map<string, (T | undefined)[]>();

  constructor(
    private readonly make: (id: string, variant: number) => T,
    private readonly maxIds = 1024,
    private readonly maxIdLength = 128,
  ) {}

  get(id: string, variant: number): T {
    if (id.length > this.maxIdLength) return this.make(id, variant);
    let slots = this.byId.get(id);
    if (slots === undefined) {
      if (this.byId.size >= this.maxIds) this.byId = new Map();
      slots = [];
      this.byId.set(id, slots);
    }
    return (slots[variant] ??= this.make(id, variant));
  }

  /** Distinct ids held (for tests). */
  get size(): number {
    return this.byId.size;
  }
}
