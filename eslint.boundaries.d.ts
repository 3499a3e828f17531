import type { Linter } from 'eslint';

export declare const folderBoundaries: Linter.Config;
