import { SettingsAnswer, SettingsPatch } from '../../../shared/settings.js';
import type { Core } from '../../core/create-core.js';
import { BenchtopError } from '../../core/errors.js';
import type { Principal } from '../../core/store/key-store.js';
import type { Routes } from '../route-spec.js';
import { parseWith } from '../validate.js';

/** Settings belong to the machine's owner: the window's key and `benchtop keys create` keys. */
function requireOwner(principal: Principal): void {
  if (principal.org === 'local') return;
  throw new BenchtopError(
    'forbidden',
    `only keys of organization "local" (this machine's owner) may read or change settings; this key belongs to "${principal.org}" — use the key of the Benchtop window or one made with \`benchtop keys create\``,
  );
}

/** Benchtop extension: the settings screen of the window (README "Configuration"). */
export function settingsRoutes(routes: Routes, core: Core): void {
  const tag = 'settings';

  routes.add(
    {
      method: 'get',
      path: '/settings',
      tag,
      summary: 'The settings in effect, secrets masked, and the changed keys waiting for a restart',
      response: SettingsAnswer,
    },
    ({ principal }) => {
      requireOwner(principal);
      return core.settingsService.get();
    },
  );

  routes.add(
    {
      method: 'patch',
      path: '/settings',
      tag,
      summary:
        'Change settings: deep-merged into config.json (null removes a key), applied at once where possible',
      bodyDoc: SettingsPatch,
      response: SettingsAnswer,
    },
    ({ req, principal }) => {
      requireOwner(principal);
      // Validated for the message, but merged as sent: a null removes its key, which the
      // contract's usual null stripping would lose.
      const patch: unknown = req.body ?? {};
      parseWith(SettingsPatch, patch);
      return core.settingsService.update(patch);
    },
  );
}
