/** Something whose reading can be stopped and restarted: an undici response body (a Readable). */
export interface Pausable {
  pause(): unknown;
  resume(): unknown;
}

/**
 * One streaming request's flow control: backpressure from the client's socket to the upstream body.
 *
 * The response writer calls `pause()` when the client's socket buffer is full and `resume()` on its
 * 'drain'; upstream bodies `attach` and are paused while the flow is, so undici stops reading the
 * provider's socket and TCP pushes back to the provider.
 *
 * Requests that share one upstream call (coalesced cache misses) `join` the flow of the request that
 * started it: the upstream is then paused only while every one of those clients is paused (or gone),
 * so one slow client never stalls the others. `held` is this request's own client; `paused` is what
 * the upstream obeys.
 */
export class Flow {
  private ownHeld = false;
  private gone = false;
  private effective = false;
  private members: Flow[] | undefined;
  private groups: Flow[] | undefined;
  private readonly sources: Pausable[] = [];
  private listeners: (() => void)[] | undefined;

  /** This request's own client has asked to stop (or has left). */
  get held(): boolean {
    return this.ownHeld || this.gone;
  }

  /** The attached upstream bodies are paused. */
  get paused(): boolean {
    return this.effective;
  }

  /** The client's socket buffer is full. */
  pause(): void {
    if (this.ownHeld) return;
    this.ownHeld = true;
    this.changed();
  }

  /** The client's socket drained. */
  resume(): void {
    if (!this.ownHeld) return;
    this.ownHeld = false;
    this.changed();
  }

  /** The client has left: it no longer asks for data (requests that joined keep the upstream going). */
  close(): void {
    if (this.gone) return;
    this.gone = true;
    this.changed();
  }

  /**
   * Pause `source` whenever this flow is paused, from now until the returned function is called (the
   * body ended, failed or was aborted).
   */
  attach(source: Pausable): () => void {
    this.sources.push(source);
    if (this.effective) source.pause();
    return () => {
      const i = this.sources.indexOf(source);
      if (i >= 0) this.sources.splice(i, 1);
    };
  }

  /** `other` (another request's client) now reads this flow's upstream too; returns its leave. */
  join(other: Flow): () => void {
    (this.members ??= []).push(other);
    (other.groups ??= []).push(this);
    if (this.update()) this.notify();
    return () => {
      remove(this.members, other);
      remove(other.groups, this);
      if (this.update()) this.notify();
    };
  }

  /** Called after every change of `held` or `paused`; returns the function that removes it. */
  onChange(listener: () => void): () => void {
    (this.listeners ??= []).push(listener);
    return () => remove(this.listeners, listener);
  }

  private changed(): void {
    this.update();
    if (this.groups) for (const g of this.groups.slice()) if (g.update()) g.notify();
    this.notify();
  }

  /** Recompute `paused` and apply it to the sources; true when it changed. */
  private update(): boolean {
    let p = this.held;
    if (p && this.members) for (const m of this.members) if (!m.held) p = false;
    if (p === this.effective) return false;
    this.effective = p;
    for (const s of this.sources.slice()) {
      if (p) s.pause();
      else s.resume();
    }
    return true;
  }

  private notify(): void {
    if (this.listeners) for (const l of this.listeners.slice()) l();
  }
}

function remove<T>(list: T[] | undefined, item: T): void {
  if (!list) return;
  const i = list.indexOf(item);
  if (i >= 0) list.splice(i, 1);
}
