import { ApiKeyList, CreatedApiKey } from '../../../shared/keys.js';
import { Empty } from '../../../shared/common.js';
import type { Core } from '../../core/create-core.js';
import { BenchtopError, notFound } from '../../core/errors.js';
import { NO_CONTENT, type Routes } from '../route-spec.js';

const MINUTE_MS = 60_000;

/**
 * Benchtop extension: every organization manages its own stored keys. Creating them is capped
 * and throttled per organization, since limits kept per key would otherwise be lifted by minting
 * more keys; `benchtop keys create` (the machine's owner, at the machine) is held to neither.
 */
export function keyRoutes(routes: Routes, core: Core): void {
  const tag = 'keys';
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

  routes.add(
    {
      method: 'get',
      path: '/keys',
      tag,
      summary:
        "The caller's organization's stored keys, newest first (keys given in the environment or the window's link are not listed)",
      response: ApiKeyList,
    },
    ({ principal }) => core.keys.list(principal.org),
  );

  routes.add(
    {
      method: 'post',
      path: '/keys',
      tag,
      summary:
        "A new key for the caller's organization; the key is shown only in this answer (at most limits.keys_per_org unrevoked keys, limits.key_creations_per_minute a minute)",
      body: Empty,
      response: CreatedApiKey,
    },
    ({ principal }): CreatedApiKey => {
      const at = Date.now();
      const recent = admit(principal.org, at);
      const { key, info } = core.keys.create(principal.org);
      created.set(principal.org, [...recent, at]);
      return { key, ...info };
    },
  );

  routes.add(
    {
      method: 'delete',
      path: '/keys/:id',
      tag,
      summary: 'Revoke a key of the caller’s organization: it stops working at once',
    },
    ({ params, principal }) => {
      if (!core.keys.revoke(params.id!, principal.org)) {
        throw notFound(`no key ${params.id}; see GET /keys`, 'id');
      }
      return NO_CONTENT;
    },
  );
}
