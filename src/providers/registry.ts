import { GatewayError } from '../errors/gateway-error.js';
import { anthropic } from './anthropic/index.js';
import { OPENAI_COMPATIBLE } from './openai-compatible/descriptors.js';
import { openAICompatible } from './openai-compatible/index.js';
import { azureAI, azureOpenAI } from './azure/index.js';
import { bedrock } from './bedrock/index.js';
import { vertexAI } from './vertex-ai/index.js';
import { answeredLocally, BRIDGES, viaChat, type ChatBridge, type LocalAnswer } from './bridges/index.js';
import type { Endpoint, Provider, Target } from './types.js';

/** Providers by id and alias, and the base URL each target resolves to. */
export class ProviderRegistry {
  private readonly byName = new Map<string, Provider>();
  private readonly baseUrlOverrideMap: Map<string, string>;
  private readonly bridges: Map<Endpoint, ChatBridge | LocalAnswer>;
  private readonly bridged = new Map<Provider, Map<Endpoint, Provider>>();

  constructor(providers: readonly Provider[], baseUrlOverrides: Record<string, string> = {}, bridges: readonly (ChatBridge | LocalAnswer)[] = BRIDGES) {
    this.bridges = new Map(bridges.map((b) => [b.endpoint, b]));
    for (const p of providers) {
      this.byName.set(p.descriptor.id, p);
      for (const a of p.descriptor.aliases ?? []) this.byName.set(a, p);
    }
    this.baseUrlOverrideMap = new Map();
    for (const [name, url] of Object.entries(baseUrlOverrides)) {
      // Keyed by canonical id: an override given under an alias or `@Name` must still apply.
      const p = this.find(name);
      if (!p) throw new Error(`provider_base_urls names an unknown provider: ${name}`);
      this.baseUrlOverrideMap.set(p.descriptor.id, url);
    }
  }

  /** `openai`, `@openai`, `OpenAI` → the provider; undefined when unknown. */
  find(name: string): Provider | undefined {
    const n = (name.startsWith('@') ? name.slice(1) : name).toLowerCase();
    return this.byName.get(n);
  }

  get(name: string, param = 'provider'): Provider {
    const p = this.find(name);
    if (!p) throw new GatewayError('unknown_provider', `Unknown provider "${name}". Known providers: ${this.ids().join(', ')}.`, { param });
    return p;
  }

  /**
   * The provider as it serves `endpoint` (for `model`): itself when its descriptor has a path for it
   * (and, where `nativeModels` names the endpoint, the model matches), else through the endpoint's
   * chat bridge when there is one, or answered by the gateway when the endpoint has a local answer
   * (a token count; either made once per provider and endpoint), else itself (whose translation then
   * refuses the request).
   */
  serving(provider: Provider, endpoint: Endpoint, model?: unknown): Provider {
    const d = provider.descriptor;
    const only = d.nativeModels?.[endpoint];
    if (d.paths[endpoint] !== undefined && (only === undefined || (typeof model === 'string' && only.test(model)))) return provider;
    const bridge = this.bridges.get(endpoint);
    if (!bridge) return provider;
    let byEndpoint = this.bridged.get(provider);
    if (!byEndpoint) this.bridged.set(provider, (byEndpoint = new Map()));
    let p = byEndpoint.get(endpoint);
    if (!p) byEndpoint.set(endpoint, (p = 'answer' in bridge ? answeredLocally(provider, bridge) : (viaChat(provider, bridge) as Provider)));
    return p;
  }

  /** custom_host wins; then an operator override; then the descriptor's default. */
  baseUrl(provider: Provider, target: Target): string {
    const url = target.custom_host ?? this.baseUrlOverrideMap.get(provider.descriptor.id) ?? provider.descriptor.baseUrl;
    if (!url) {
      throw new GatewayError('invalid_config', `Provider ${provider.descriptor.id} needs a custom_host.`, {
        param: 'custom_host',
      });
    }
    return url;
  }

  /** The operator's base URLs, by canonical provider id. */
  baseUrlOverrides(): [id: string, url: string][] {
    return [...this.baseUrlOverrideMap];
  }

  ids(): string[] {
    return [...new Set([...this.byName.values()].map((p) => p.descriptor.id))];
  }
}

export function defaultProviders(): Provider[] {
  return [
    ...OPENAI_COMPATIBLE.map((d) => openAICompatible(d) as Provider),
    anthropic() as Provider,
    azureOpenAI() as Provider,
    azureAI() as Provider,
    bedrock() as Provider,
    vertexAI() as Provider,
  ];
}
