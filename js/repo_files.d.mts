// Types of repo_files.mjs, for the tests that read the repository (js/*.test.ts).
export const ROOT: string;
export function repoPath(relative: string): string;
export function readText(relative: string): string;
export function listFiles(relative: string): string[];
export function listTree(relative: string): string[];
