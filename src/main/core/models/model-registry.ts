import { isDeepStrictEqual } from 'node:util';
import type { ModelConfig, ProviderKind, Settings } from '../config.js';
import { invalidRequest } from '../errors.js';
import {
  DEFAULT_MODEL_RETRIES,
  DEFAULT_MODEL_TIMEOUT_MS,
  type ProviderPrice,
} from '../../../shared/settings.js';
import { localOnlyRefusal } from './local-only.js';
import { priceOf } from './pricing.js';
import { type ModelProvider, type ProviderContext } from './model-provider.js';
import { createAnthropicProvider } from './providers/anthropic-provider.js';
import { createLightconeProvider } from './providers/lightcone-provider.js';
import { createOpenAICompatibleProvider } from './providers/openai-compatible-provider.js';
import { createOpenAIProvider } from './providers/openai-provider.js';
import { createScriptedProvider } from './providers/scripted-provider.js';

type Env = Record<string, string | undefined>;

const FACTORIES: Record<ProviderKind, (context: ProviderContext) => ModelProvider> = {
  scripted: createScriptedProvider,
  openai: createOpenAIProvider,
  anthropic: createAnthropicProvider,
  lightcone: createLightconeProvider,
  'openai-compatible': createOpenAICompatibleProvider,
};

/** The variable a provider's key is read from when its settings name none. */
const KEY_VARIABLES: Record<ProviderKind, string | undefined> = {
  scripted: undefined,
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  lightcone: 'LIGHTCONE_CLOUD_API_KEY',
  'openai-compatible': undefined,
};

export type ResolvedModel = { name: string; config: ModelConfig; provider: ModelProvider };

/**
 * Model names → providers, from `models` in the settings (README "Configuration"). The
 * current settings are read on every call, so a change made through PATCH /settings applies at
 * once; a provider is rebuilt when its entry changed.
 */
export class ModelRegistry {
  private readonly providers = new Map<string, { config: ModelConfig; provider: ModelProvider }>();
  private readonly created = Math.floor(Date.now() / 1000);

  constructor(
    private readonly models: () => Readonly<Settings['models']>,
    private readonly env: Env = process.env,
    /** Where a model call tried again says so (Benchtop's log). */
    private readonly log: (message: string) => void = () => {},
  ) {}

  private get settings(): Readonly<Settings['models']> {
    return this.models();
  }

  get defaultModel(): string {
    return this.settings.default;
  }

  list() {
    return Object.entries(this.settings.providers).map(([id, config]) => ({
      id,
      object: 'model' as const,
      created: this.created,
      owned_by: 'benchtop',
      provider: config.provider,
    }));
  }

  /** The price of a model name, null when the settings give none. */
  price(name: string): ProviderPrice | null {
    return priceOf(this.settings, name);
  }

  /** The provider of a model name (the default one when none is given); unknown → 400. */
  resolve(name: string | undefined, param = 'model'): ResolvedModel {
    const model = name ?? this.settings.default;
    const config = this.settings.providers[model];
    if (!config) {
      const known = Object.keys(this.settings.providers);
      const list = known.length ? known.join(', ') : 'none (add some under models.providers)';
      throw invalidRequest(
        name === undefined
          ? `no model given and the default model "${model}" is not configured; configured models: ${list}`
          : `unknown model "${model}"; configured models: ${list}`,
        param,
      );
    }
    let built = this.providers.get(model);
    if (!built || !isDeepStrictEqual(built.config, config)) {
      const provider = FACTORIES[config.provider](this.context(model, config));
      built = { config, provider: this.guarded(model, config, provider) };
      this.providers.set(model, built);
    }
    return { name: model, config, provider: built.provider };
  }

  /**
   * The provider behind the models.local_only check: every request to a provider starts with
   * respond or chat, and both are refused here, before the provider opens any connection.
   */
  private guarded(name: string, config: ModelConfig, provider: ModelProvider): ModelProvider {
    const check = () => {
      const refusal = this.settings.local_only ? localOnlyRefusal(name, config) : null;
      if (refusal) throw refusal;
    };
    return {
      kind: provider.kind,
      respond: async (request) => {
        check();
        return provider.respond(request);
      },
      chat: async (request) => {
        check();
        return provider.chat(request);
      },
    };
  }

  /** Every provider key the settings give, from settings or the environment (never to be written anywhere). */
  keys(): string[] {
    return Object.values(this.settings.providers)
      .map((config) => this.keyOf(config))
      .filter((key): key is string => key !== undefined && key.length > 0);
  }

  private keyOf(config: ModelConfig): string | undefined {
    const variable = config.api_key_env ?? KEY_VARIABLES[config.provider];
    return config.api_key ?? (variable ? this.env[variable] : undefined) ?? undefined;
  }

  private context(name: string, config: ModelConfig): ProviderContext {
    const variable = config.api_key_env ?? KEY_VARIABLES[config.provider];
    return {
      name,
      config,
      apiKey: this.keyOf(config),
      keyHint: variable
        ? `set ${variable} in the environment Benchtop runs in (or models.providers.${name}.api_key)`
        : `set models.providers.${name}.api_key_env to the variable holding the key`,
      timeoutMs: config.timeout_ms ?? DEFAULT_MODEL_TIMEOUT_MS,
      retries: config.max_retries ?? DEFAULT_MODEL_RETRIES,
      log: this.log,
    };
  }
}
