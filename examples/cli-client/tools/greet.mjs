// Greets its first argument with the GREETING environment variable.
console.log(`${process.env.GREETING ?? 'Hello'}, ${process.argv[2]}!`);
