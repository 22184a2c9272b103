// Reads files of the repository (package.json, the lock file, node_modules) for the vitest
// that checks the pinned dependencies; in .mjs because tsc checks js/ without Node's types.
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";

export const ROOT = path.resolve(new URL("..", import.meta.url).pathname);

export function repoPath(relative) {
  return path.join(ROOT, relative);
}

export function readText(relative) {
  return readFileSync(repoPath(relative), "utf8");
}

export function listFiles(relative) {
  return readdirSync(repoPath(relative));
}
