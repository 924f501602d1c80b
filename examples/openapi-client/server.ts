/**
 * The bookshop API of the openapi-client example (node:http on 127.0.0.1, port 0). It serves its own
 * description at `/openapi.yaml` (the file next to this one) and the API under `/api`. Writes need
 * `Authorization: Bearer <token>`. It remembers a one-line summary of each API request.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Book {
  id: number;
  title: string;
  author: string;
  blurb: { en: string; fr: string };
}

export interface Bookshop {
  /** e.g. `http://127.0.0.1:41234` */
  url: string;
  /** One line per API request: method, path with query, and the interesting headers and body. */
  requests: string[];
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body?: unknown): void {
  if (body === undefined) return void res.writeHead(status).end();
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text;
}

export async function startBookshop(token: string): Promise<Bookshop> {
  const spec = await readFile(new URL('./openapi.yaml', import.meta.url), 'utf8');
  const books: Book[] = [
    { id: 1, title: 'Dune', author: 'Frank Herbert', blurb: { en: 'Spice and sand.', fr: 'Épice et sable.' } },
    {
      id: 2,
      title: 'The Dispossessed',
      author: 'Ursula K. Le Guin',
      blurb: { en: 'Two worlds, one wall.', fr: 'Deux mondes, un mur.' },
    },
    {
      id: 3,
      title: 'The Left Hand of Darkness',
      author: 'Ursula K. Le Guin',
      blurb: { en: 'Winter, always.', fr: "L'hiver, toujours." },
    },
  ];
  const reviews: Record<number, Array<{ stars: number; text: string }>> = { 1: [{ stars: 5, text: 'A classic.' }] };
  const requests: string[] = [];
  const view = (b: Book, lang: string) => ({
    id: b.id,
    title: b.title,
    author: b.author,
    blurb: lang === 'fr' ? b.blurb.fr : b.blurb.en,
  });

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/openapi.yaml') {
      res.writeHead(200, { 'content-type': 'application/yaml' });
      return res.end(spec);
    }
    const body = req.method === 'POST' ? await readBody(req) : '';
    const lang = req.headers['accept-language'] ?? 'en';
    requests.push(
      `${req.method} ${url.pathname}${url.search}` +
        (req.headers['accept-language'] ? `  Accept-Language: ${lang}` : '') +
        (req.headers.authorization ? `  Authorization: Bearer ***` : '') +
        (body ? `  body: ${body}` : ''),
    );
    const authorized = req.headers.authorization === `Bearer ${token}`;

    if (url.pathname === '/api/books' && req.method === 'GET') {
      const author = url.searchParams.get('author');
      const limit = Number(url.searchParams.get('limit') ?? 10);
      return send(
        res,
        200,
        books
          .filter((b) => !author || b.author === author)
          .slice(0, limit)
          .map((b) => view(b, lang)),
      );
    }
    if (url.pathname === '/api/books' && req.method === 'POST') {
      if (!authorized) return send(res, 401, { error: 'a bearer token is required to add books' });
      const input = JSON.parse(body) as { title: string; author: string };
      const book: Book = { id: books.length + 1, title: input.title, author: input.author, blurb: { en: '', fr: '' } };
      books.push(book);
      return send(res, 201, view(book, lang));
    }
    const match = /^\/api\/books\/(\d+)(\/reviews)?$/.exec(url.pathname);
    const book = match ? books.find((b) => b.id === Number(match[1])) : undefined;
    if (match && !book) return send(res, 404, { error: `no book with id ${match[1]}` });
    if (book && match?.[2]) return send(res, 200, reviews[book.id] ?? []);
    if (book && req.method === 'GET') return send(res, 200, view(book, lang));
    if (book && req.method === 'DELETE') {
      if (!authorized) return send(res, 401, { error: 'a bearer token is required to delete books' });
      books.splice(books.indexOf(book), 1);
      return send(res, 204);
    }
    send(res, 404, { error: 'not found' });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
