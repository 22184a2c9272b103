// Types of system_dot.mjs.
export function systemDotSvg(dot: string): string;
