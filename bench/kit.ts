/**
 * The benchmarks measure the compiled package in dist/ (what users run; `npm run bench` builds it first),
 * while their types come from src/ so that type-checking never needs a build.
 */
type Kit = typeof import('../src/index.js');
type OpenApiKit = typeof import('../src/loaders/openapi/index.js');

export const kit: Kit = await import(new URL('../dist/index.js', import.meta.url).href);
export const openapiKit: OpenApiKit = await import(new URL('../dist/loaders/openapi/index.js', import.meta.url).href);
