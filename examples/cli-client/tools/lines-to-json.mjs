// Turns its first argument, one item per line, into {"count": n, "items": [...]}.
const items = (process.argv[2] ?? '').split('\n').filter((line) => line.trim() !== '');
console.log(JSON.stringify({ count: items.length, items }));
