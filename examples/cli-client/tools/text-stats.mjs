// Prints statistics about its first argument as one line of JSON; exits 2 when it is empty.
const text = process.argv[2] ?? '';
if (text.trim() === '') {
  console.error('text-stats: the text is empty');
  process.exit(2);
}
const words = text.trim().split(/\s+/).length;
console.log(JSON.stringify({ received: text, words, characters: [...text].length, lines: text.split('\n').length }));
