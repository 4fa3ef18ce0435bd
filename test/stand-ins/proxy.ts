import { createServer } from 'node:http';
import { connect, type Socket } from 'node:net';
import { listenLocal } from './listen';

/**
 * An HTTP proxy on 127.0.0.1 that tunnels CONNECT requests (what undici's ProxyAgent sends for
 * every target) and records each target `host:port`, in order.
 */
export interface ProxyStandIn {
  baseUrl: string;
  targets: string[];
  close(): Promise<void>;
}

export async function startProxyStandIn(): Promise<ProxyStandIn> {
  const targets: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((_req, res) => void res.writeHead(405).end());
  server.on('connect', (req, client: Socket, head: Buffer) => {
    const target = req.url ?? '';
    targets.push(target);
    const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
    const upstream = connect(port, host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  const listening = await listenLocal(server);
  return {
    baseUrl: listening.baseUrl,
    targets,
    close: async () => {
      for (const s of sockets) s.destroy();
      await listening.close();
    },
  };
}
