import type { VirtualKey } from '../../config/bootstrap.js';
import { IndexedVirtualKeyStore, refOf, type MadeVirtualKey } from '../virtual-key-store.js';

/** Virtual keys in this process only (see `VirtualKeyIndex`): made keys are lost on restart. */
export class MemoryVirtualKeyStore extends IndexedVirtualKeyStore {
  constructor(declared: Record<string, VirtualKey> = {}) {
    super(declared);
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
