import type { ApiKeyStore } from './api-key-store.js';
import type { SavedConfigStore } from './versioned-store.js';
import type { VirtualKeyStore } from './virtual-key-store.js';

/**
 * What the operator declares and the management routes will edit while the gateway runs: gateway
 * keys, virtual keys and saved configs, each behind its port.
 */
export interface Catalog {
  apiKeys: ApiKeyStore;
  virtualKeys: VirtualKeyStore;
  savedConfigs: SavedConfigStore;
}
