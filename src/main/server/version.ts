import packageJson from '../../../package.json' with { type: 'json' };

/** Benchtop's version, from package.json (bundled into out/ at build time). */
export const VERSION: string = packageJson.version;
