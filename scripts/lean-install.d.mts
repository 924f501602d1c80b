/** Declarations of scripts/lean-install.mjs (used by bench/install.ts and test/packaging/lean-install.test.ts). */
export declare const ROOT: string;
export interface OptionalPart {
  part: string;
  packages: string[];
  note?: string;
}
export declare const OPTIONAL_PARTS: OptionalPart[];
export declare function npm(args: string[], cwd: string, timeoutMs?: number): Promise<string>;
export declare function packTarball(dest: string): Promise<{ tarball: string; files: string[]; size: number }>;
export declare function installTarball(
  tarball: string,
  options?: { offline?: boolean; extra?: string[] },
): Promise<{ dir: string; ms: number }>;
export declare function measureInstall(dir: string): { bytes: number; packages: number; names: string[] };
export declare function withPeerRanges(packages: string[]): string[];
