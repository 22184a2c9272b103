// Reads files of the repository (package.json, the lock file, node_modules, js/ itself) for the
// vitests that check pinned dependencies and the source's shape; in .mjs because tsc checks js/
// without Node's types.
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

/** Every file under `relative` (a folder of the repository), as repository paths. */
export function listTree(relative) {
  return readdirSync(repoPath(relative), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath ?? entry.path, entry.name)));
}
