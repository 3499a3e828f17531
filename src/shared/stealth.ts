import { z } from 'zod';

/** A time zone Chromium can emulate: an IANA id that this runtime's ICU knows. */
export function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

function isLocale(value: string): boolean {
  try {
    return Intl.getCanonicalLocales(value).length === 1;
  } catch {
    return false;
  }
}

/**
 * ASCII control characters (line breaks and NUL among them). A header value cannot carry CR, LF
 * or NUL: Chromium refuses such a user agent when the computer starts, and in a header they would
 * end it early. None belongs in a user agent, so all of them are refused up front.
 */
// eslint-disable-next-line no-control-regex
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

const stealthFields = {
  user_agent: z
    .string()
    .min(1)
    .max(1024)
    .refine((value) => !CONTROL_CHARACTERS.test(value), {
      message:
        'stealth.user_agent must be one line of printable text: no line breaks, tabs, NUL or other control characters (it is sent as the User-Agent header)',
    })
    .optional()
    .describe('navigator.userAgent and the User-Agent header.'),
  locale: z
    .string()
    .max(100)
    .refine(isLocale, {
      message: 'stealth.locale must be a BCP 47 language tag such as "de-DE"',
    })
    .optional()
    .describe('BCP 47 tag, e.g. "de-DE": navigator.language, Intl defaults and Accept-Language.'),
  timezone: z
    .string()
    .max(100)
    .refine(isTimeZone, {
      message: 'stealth.timezone must be an IANA time zone id such as "Europe/Berlin"',
    })
    .optional()
    .describe('IANA id, e.g. "Europe/Berlin": the time zone pages see in Date and Intl.'),
  hide_webdriver: z
    .boolean()
    .default(true)
    .describe('navigator.webdriver reads false, as in a browser nobody automates.'),
};

export const STEALTH_OPTIONS = Object.keys(stealthFields);

export const Stealth = z
  .strictObject(stealthFields, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `stealth.${issue.keys[0]} is not a stealth option; known options: ${STEALTH_OPTIONS.join(', ')}`
        : undefined,
  })
  .describe('How the browser presents itself to pages (browser computers only).')
  .meta({ id: 'Stealth' });
export type Stealth = z.infer<typeof Stealth>;
