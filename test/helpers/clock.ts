/** A manual clock in ms, for code that takes `now` (not a test file itself). */
export class FakeClock {
  constructor(public t = 1_700_000_000_000) {}
  readonly now = (): number => this.t;
  advance(ms: number): void {
    this.t += ms;
  }
}
