import { isIP } from 'node:net';
import type { ModelConfig } from '../../../shared/settings.js';
import { ModelError } from './model-provider.js';

/** Where each kind sends requests when its entry names no base_url (scripted sends none). */
const DEFAULT_BASE_URLS: Record<ModelConfig['provider'], string | null> = {
  scripted: null,
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
  lightcone: 'https://api.tzafon.ai',
  'openai-compatible': null,
};

/**
 * Whether a URL host can only reach this machine: `localhost` (and names under it, which
 * resolvers keep on loopback), 127.0.0.0/8, ::1 and IPv4-mapped 127.x. Any other name is not
 * loopback, whatever it would resolve to: the check runs before any lookup, so it cannot be
 * fooled by a DNS answer and sends nothing out to make up its mind.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.split('.')[0] === '127';
  if (isIP(host) === 6) {
    if (host === '::1' || /^(0{1,4}:){7}0{0,3}1$/.test(host)) return true;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(host);
    if (mapped) return mapped[1]!.split('.')[0] === '127';
    const hexMapped = /^::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}$/.exec(host);
    return hexMapped !== null && parseInt(hexMapped[1]!, 16) >> 8 === 127;
  }
  return false;
}

/**
 * The refusal of a model under `models.local_only`, or null when it may be called: a provider
 * that sends nothing (scripted), or one whose address is on this machine.
 */
export function localOnlyRefusal(name: string, config: ModelConfig): ModelError | null {
  const base = config.base_url ?? DEFAULT_BASE_URLS[config.provider];
  if (base === null) return null;
  let host: string;
  try {
    host = new URL(base).hostname;
  } catch {
    host = base;
  }
  if (isLoopbackHost(host)) return null;
  return new ModelError(
    'blocked',
    `model "${name}" is refused: models.local_only is on and its provider's address ${host} is not ` +
      `on this machine (loopback); point models.providers.${name}.base_url at a local server ` +
      'or turn models.local_only off',
  );
}
