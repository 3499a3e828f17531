import { ROUTE_LIST } from '../../../shared/contract/routes.js';
import type { CreatedApiKey } from '../../../shared/keys.js';
import type { Core } from '../../core/create-core.js';
import { BenchtopError, notFound } from '../../core/errors.js';
import type { Principal } from '../../core/store/key-store.js';
import { buildOpenApi } from '../openapi.js';
import type { Handlers } from '../register-routes.js';
import { VERSION } from '../version.js';

const MINUTE_MS = 60_000;

type AdminRouteName =
  | 'meta.health'
  | 'meta.openapi'
  | 'meta.screenshot'
  | 'keys.list'
  | 'keys.create'
  | 'keys.revoke'
  | 'settings.get'
  | 'settings.update';

/** Settings belong to the machine's owner: the window's key and `benchtop keys create` keys. */
export function requireOwner(principal: Principal): void {
  if (principal.org === 'local') return;
  throw new BenchtopError(
    'forbidden',
    `only keys of organization "local" (this machine's owner) may read or change settings; this key belongs to "${principal.org}" — use the key of the Benchtop window or one made with \`benchtop keys create\``,
  );
}

/**
 * Health, the API description, screenshots by URL; keys and settings (Benchtop extensions).
 * Every organization manages its own stored keys. Creating them is capped and throttled per
 * organization, since limits kept per key would otherwise be lifted by minting more keys;
 * `benchtop keys create` (the machine's owner, at the machine) is held to neither.
 */
export function adminHandlers(core: Core): Pick<Handlers, AdminRouteName> {
  /** When each organization created its keys within the last minute, oldest first. */
  const created = new Map<string, number[]>();

  const admit = (org: string, at: number): number[] => {
    const { key_creations_per_minute: perMinute, keys_per_org: perOrg } = core.settings.limits;
    const recent = (created.get(org) ?? []).filter((time) => time > at - MINUTE_MS);
    if (recent.length >= perMinute) {
      const seconds = (recent[recent.length - perMinute]! + MINUTE_MS - at) / 1000;
      throw new BenchtopError(
        'rate_limited',
        `organization "${org}" created ${recent.length} keys within the last minute, the most limits.key_creations_per_minute allows; try again in ${Math.ceil(seconds)} s`,
        { retryAfterSeconds: seconds },
      );
    }
    const live = core.keys.liveCount(org);
    if (live >= perOrg) {
      throw new BenchtopError(
        'quota_exceeded',
        `organization "${org}" has ${live} keys that are not revoked, the most limits.keys_per_org allows; revoke one it no longer uses with DELETE /keys/{id} (GET /keys lists them), or have the machine's owner raise limits.keys_per_org`,
      );
    }
    return recent;
  };

  return {
    'meta.health': () => ({ status: 'ok', version: VERSION }),
    'meta.openapi': () => buildOpenApi(ROUTE_LIST, { version: VERSION, baseUrl: core.baseUrl }),
    'meta.screenshot': async ({ params, res }) => {
      const png = await core.screenshots.read(params.computer, params.file);
      if (!png)
        throw notFound(
          'no such screenshot; screenshots expire ten minutes after their computer ends',
        );
      res.setHeader('Content-Type', 'image/png');
      res.setHeader('Cache-Control', 'private, max-age=600');
      res.end(png);
    },

    'keys.list': ({ principal }) => core.keys.list(principal.org),
    'keys.create': ({ principal }): CreatedApiKey => {
      const at = Date.now();
      const recent = admit(principal.org, at);
      const { key, info } = core.keys.create(principal.org);
      created.set(principal.org, [...recent, at]);
      return { key, ...info };
    },
    'keys.revoke': ({ params, principal }) => {
      if (!core.keys.revoke(params.id, principal.org)) {
        throw notFound(`no key ${params.id}; see GET /keys`, 'id');
      }
    },

    'settings.get': ({ principal }) => {
      requireOwner(principal);
      return core.settingsService.get();
    },
    'settings.update': ({ req, principal }) => {
      requireOwner(principal);
      // Validated against the contract, but merged as sent: a null removes its key, which the
      // contract's usual null stripping would lose.
      return core.settingsService.update(req.body ?? {});
    },
  };
}
