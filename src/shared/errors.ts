import { z } from 'zod';

export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  exec_disabled: 403,
  ip_blocked: 403,
  forbidden: 403,
  // models.local_only refused a provider that is not on this machine: settings, not a retry, fix it.
  model_blocked: 403,
  not_found: 404,
  payload_too_large: 413,
  // A WebSocket endpoint asked without the upgrade (the SDKs' plain GET of /computers/{id}/ws).
  upgrade_required: 426,
  rate_limited: 429,
  concurrency_limit: 429,
  // An organization's stored bytes or live keys at their limit: deleting or revoking lifts it.
  quota_exceeded: 429,
  internal: 500,
  model_error: 502,
  unavailable: 503,
  model_timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const ErrorBody = z
  .object({
    message: z.string().describe('One sentence a person can act on.'),
    code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
    param: z.string().optional().describe('The request field the error is about.'),
    request_id: z.string(),
  })
  .meta({ id: 'Error' });
export type ErrorBody = z.infer<typeof ErrorBody>;
