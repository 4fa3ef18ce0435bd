import { Agent, fetch, type RequestInit } from 'undici';

const octet = () => 1 + Math.floor(Math.random() * 254);

/**
 * Requests from a loopback address of their own (127.x.y.z reaches a server on 127.0.0.1, which sees
 * it as the socket's address), so a test's per-address limits are not shared with other test files.
 * Close the agents in afterAll.
 */
export class SourceAddresses {
  private readonly agents: Agent[] = [];

  from(address = `127.${octet()}.${octet()}.${octet()}`) {
    const agent = new Agent({ localAddress: address });
    this.agents.push(agent);
    return (
      url: string,
      headers: Record<string, string> = {},
      init: Omit<RequestInit, 'headers' | 'dispatcher'> = {},
    ) => fetch(url, { ...init, headers, dispatcher: agent });
  }

  close(): Promise<void> {
    return Promise.all(this.agents.map((a) => a.close())).then(() => undefined);
  }
}
