export { InMemoryToolRepository } from './in-memory-repository.js';
export { Bm25Search, type Bm25Options } from './bm25-search.js';
export { stem, tokenize } from './bm25-text.js';
export { WordMatchSearch, type WordMatchOptions } from './word-match-search.js';
