/**
 * A bookshop over GraphQL (graphql-yoga on node:http, 127.0.0.1, port 0): queries and a mutation over
 * HTTP POST at /graphql, and a subscription over WebSocket (graphql-ws) on the same path.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useServer } from 'graphql-ws/use/ws';
import { createSchema, createYoga } from 'graphql-yoga';
import { WebSocketServer } from 'ws';

const typeDefs = /* GraphQL */ `
  type Author {
    name: String!
    born: Int
  }
  type Book {
    id: ID!
    title: String!
    author: Author!
  }
  type Query {
    "Add two integers"
    add(a: Int!, b: Int!): Int!
    "Find a book by its id"
    book(id: ID!): Book
  }
  type Mutation {
    "Add a book to the shop"
    addBook(title: String!, author: String!): Book!
  }
  type Subscription {
    "Count down from a number"
    countdown(from: Int!): Int!
  }
`;

export async function startGraphqlServer(): Promise<{ url: string; close(): Promise<void> }> {
  const books = [
    { id: '1', title: 'Dune', author: { name: 'Frank Herbert', born: 1920 } },
    { id: '2', title: 'Kindred', author: { name: 'Octavia E. Butler', born: 1947 } },
  ];
  const schema = createSchema({
    typeDefs,
    resolvers: {
      Query: {
        add: (_: unknown, { a, b }: { a: number; b: number }) => a + b,
        book: (_: unknown, { id }: { id: string }) => {
          const book = books.find((b) => b.id === id);
          if (!book) throw new Error(`no book with id ${id}`);
          return book;
        },
      },
      Mutation: {
        addBook: (_: unknown, { title, author }: { title: string; author: string }) => {
          const book = {
            id: String(books.length + 1),
            title,
            author: { name: author, born: null as unknown as number },
          };
          books.push(book);
          return book;
        },
      },
      Subscription: {
        countdown: {
          subscribe: async function* (_: unknown, { from }: { from: number }) {
            for (let n = from; n >= 0; n--) yield { countdown: n };
          },
        },
      },
    },
  });
  // maskedErrors: false lets the resolver's message through (yoga hides it by default).
  const yoga = createYoga({ schema, graphqlEndpoint: '/graphql', logging: false, maskedErrors: false });
  const http = createServer(yoga);
  const wss = new WebSocketServer({ server: http, path: '/graphql' });
  useServer({ schema }, wss);
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/graphql`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of wss.clients) socket.terminate();
        wss.close();
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
