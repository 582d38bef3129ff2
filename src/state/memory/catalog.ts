import type { VirtualKey } from '../../config/bootstrap.js';
import type { Config } from '../../config/schema.js';
import type { ApiKeyRecord } from '../../security/api-keys.js';
import type { Catalog } from '../catalog.js';
import { MemoryApiKeyStore } from './api-key-store.js';
import { MemoryVersionedStore } from './versioned-store.js';

export interface CatalogSeed {
  apiKeys: Iterable<{ key: string; record: ApiKeyRecord }>;
  virtualKeys: Record<string, VirtualKey>;
  savedConfigs: ReadonlyMap<string, Config>;
}

/** The embedded catalog, seeded at start with what was validated there (the bootstrap file, pipelines/). */
export function memoryCatalog(seed: CatalogSeed): Catalog {
  return {
    apiKeys: new MemoryApiKeyStore(seed.apiKeys),
    virtualKeys: new MemoryVersionedStore(Object.entries(seed.virtualKeys)),
    savedConfigs: new MemoryVersionedStore(seed.savedConfigs),
  };
}
