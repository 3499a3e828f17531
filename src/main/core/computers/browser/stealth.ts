import type { Stealth } from '../../../../shared/stealth.js';
import type { ComputerContextOptions } from './browser-host.js';

/**
 * Chrome that nobody automates answers false. The getter sits on the prototype, where Chrome keeps
 * it, so `'webdriver' in navigator` stays true and the own properties of navigator stay empty.
 */
const HIDE_WEBDRIVER = `Object.defineProperty(Navigator.prototype, 'webdriver', {
  get: () => false,
  configurable: true,
  enumerable: true,
});`;

/** The context options and init scripts that make a browser computer present itself as asked. */
export function stealthContextOptions(stealth: Stealth): ComputerContextOptions {
  const options: ComputerContextOptions = {};
  if (stealth.user_agent !== undefined) options.userAgent = stealth.user_agent;
  if (stealth.locale !== undefined) options.locale = stealth.locale;
  // Chromium takes only canonical ids ("UTC", not "utc"); Intl knows the canonical spelling.
  if (stealth.timezone !== undefined) {
    options.timezoneId = new Intl.DateTimeFormat('en', {
      timeZone: stealth.timezone,
    }).resolvedOptions().timeZone;
  }
  if (stealth.hide_webdriver) options.initScripts = [HIDE_WEBDRIVER];
  return options;
}
