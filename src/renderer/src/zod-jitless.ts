import { config } from 'zod';

// The window's Content-Security-Policy allows no eval. zod compiles its object parsers with
// `new Function` when it can, and probing for that alone is reported as a violation; the contract
// schemas the typed client carries must be built without it. Imported first by main.tsx.
config({ jitless: true });
