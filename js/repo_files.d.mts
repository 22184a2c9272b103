// Types of repo_files.mjs, for js/pinned_deps.test.ts.
export const ROOT: string;
export function repoPath(relative: string): string;
export function readText(relative: string): string;
export function listFiles(relative: string): string[];
