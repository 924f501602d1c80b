export { InMemoryToolRepository } from './in-memory-repository.js';
export { Bm25Search, tokenize, stem, type Bm25Options } from './bm25-search.js';
export { WordMatchSearch, type WordMatchOptions } from './word-match-search.js';
