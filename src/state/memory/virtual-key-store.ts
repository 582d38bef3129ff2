import type { VirtualKey } from '../../config/bootstrap.js';
import type { Versioned } from '../versioned-store.js';
import { VirtualKeyIndex, type MadeVirtualKey, type VirtualKeyRecord, type VirtualKeyStore } from '../virtual-key-store.js';

/** Virtual keys in this process only (see `VirtualKeyIndex`): made keys are lost on restart. */
export class MemoryVirtualKeyStore implements VirtualKeyStore {
  private readonly index: VirtualKeyIndex;

  constructor(declared: Record<string, VirtualKey> = {}) {
    this.index = new VirtualKeyIndex(declared);
  }

  get version(): number {
    return this.index.version;
  }

  get(id: string): Versioned<VirtualKey> | undefined {
    return this.index.get(id);
  }

  record(id: string): VirtualKeyRecord | undefined {
    return this.index.record(id);
  }

  list(): MadeVirtualKey[] {
    return this.index.list();
  }

  create(record: MadeVirtualKey): Promise<boolean> {
    return Promise.resolve(!this.index.has(record.id) && this.index.put(record));
  }

  replace(record: MadeVirtualKey): Promise<boolean> {
    return Promise.resolve(this.index.isMade(record.id) && this.index.put(record));
  }

  delete(id: string): Promise<boolean> {
    return Promise.resolve(this.index.remove(id));
  }
}
