import { z } from 'zod';

/** A secret's name: what `{{secret:NAME}}` refers to. */
export const SecretName = z
  .string()
  .regex(
    /^[A-Za-z0-9_.-]{1,64}$/,
    'a secret name is 1 to 64 letters, digits, "_", "." or "-" (it goes inside {{secret:NAME}})',
  );

export const SecretCreateBody = z.strictObject({
  name: SecretName,
  value: z
    .string()
    .max(10_000)
    .refine((value) => value.length >= 4, {
      message:
        'value is shorter than 4 characters: so short a text cannot be removed from recordings without garbling them; type it directly',
    }),
});
export type SecretCreateBody = z.infer<typeof SecretCreateBody>;

/** What anyone ever reads back of a secret: never its value. */
export const SecretInfo = z
  .object({ name: z.string(), created_at: z.string() })
  .meta({ id: 'SecretInfo' });
export type SecretInfo = z.infer<typeof SecretInfo>;

export const SecretParams = z.object({ name: SecretName });

/** `{{secret:NAME}}` inside typed text; the name as its first group. */
export const SECRET_PLACEHOLDER = /\{\{secret:([^{}]*)\}\}/g;

/** The names a text refers to, in order of first mention. */
export function secretNames(text: string): string[] {
  return [...new Set([...text.matchAll(SECRET_PLACEHOLDER)].map((match) => match[1]!))];
}
