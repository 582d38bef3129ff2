import type { VirtualKey } from '../../config/bootstrap.js';
import type { Versioned } from '../versioned-store.js';
import { refOf, VirtualKeyIndex, type MadeVirtualKey, type VirtualKeyRecord, type VirtualKeyStore } from '../virtual-key-store.js';

/** Virtual keys in this process only (see `VirtualKeyIndex`): made keys are lost on restart. */
export class MemoryVirtualKeyStore implements VirtualKeyStore {
  private readonly index: VirtualKeyIndex;

  constructor(declared: Record<string, VirtualKey> = {}) {
    this.index = new VirtualKeyIndex(declared);
  }

  get version(): number {
    return this.index.version;
  }

  get(ref: string): Versioned<VirtualKey> | undefined {
    return this.index.get(ref);
  }

  record(ref: string): VirtualKeyRecord | undefined {
    return this.index.record(ref);
  }

  withId(id: string): MadeVirtualKey[] {
    return this.index.withId(id);
  }

  list(): MadeVirtualKey[] {
    return this.index.list();
  }

  declared(): VirtualKeyRecord[] {
    return this.index.declaredList();
  }

  create(record: MadeVirtualKey): Promise<boolean> {
    return Promise.resolve(this.index.free(record) && this.index.put(record));
  }

  replace(record: MadeVirtualKey): Promise<boolean> {
    return Promise.resolve(this.index.isMade(refOf(record)) && this.index.put(record));
  }

  delete(ref: string): Promise<boolean> {
    return Promise.resolve(this.index.remove(ref));
  }
}
