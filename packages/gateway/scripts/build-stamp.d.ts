/** Types of build-stamp.js (plain JavaScript: bin/tms.js runs it before any TypeScript loader exists). */
export declare const STAMP_FILE: string;
export declare function isBuildInput(fileName: string): boolean;
export declare function buildInputs(sourceDir: string): string[];
export declare function sourceFingerprint(sourceDir: string): string;
export type Entry = { kind: 'compiled'; path: string } | { kind: 'source'; path: string; reason: string };
export declare function chooseEntry(packageDir: string): Entry;
