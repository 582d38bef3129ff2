import type { Config } from '../config/schema.js';

/** A stored value and the store version of the write that stored it. */
export interface Versioned<T> {
  readonly value: T;
  readonly version: number;
}

/**
 * The read side of a versioned store: synchronous and local (the plan builder reads it while it
 * compiles; a shared adapter keeps a local mirror). `version` grows on every write to the store, and
 * an entry carries the version of the write that stored it, so versions are never reused: an entry
 * that was deleted and put back, or replaced, has a new one. Whatever was built from an entry can
 * tell it is stale by comparing versions (0 stands for "absent").
 */
export interface VersionedLookup<T> {
  readonly version: number;
  get(id: string): Versioned<T> | undefined;
}

/**
 * Objects addressed by id that can change while the gateway runs (the management routes write them).
 * Values are stored as given: the caller validates them (the same schemas as at start).
 */
export interface VersionedStore<T> extends VersionedLookup<T> {
  ids(): string[];
  /** Stores (or replaces) the value; resolves with its new version. */
  put(id: string, value: T): Promise<number>;
  /** False when there was nothing to delete. */
  delete(id: string): Promise<boolean>;
}

/** Saved configs, by the id `x-gateway-config` names. */
export type SavedConfigStore = VersionedStore<Config>;
