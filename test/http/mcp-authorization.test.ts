/**
 * The MCP authorization spec from the client's side, with the official SDK's own functions and
 * client against the app on 127.0.0.1: a 401 leads to the RFC 9728 metadata, the metadata names
 * the authorization server, and a token from the identity provider opens an MCP session.
 */

import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { ISSUER, idpToken, JwksServer, type SigningKey, signingKey } from '../support/jwks'
import { connectMcp } from '../support/mcp'

const jwks = new JwksServer()
let key: SigningKey
let server: ReturnType<typeof serve>
let mcpUrl: string

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
}
const postInitialize = (token?: string) =>
  fetch(mcpUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(INITIALIZE),
  })

beforeAll(async () => {
  await jwks.start()
  key = await signingKey('rsa-1', 'RS256')
  jwks.published = [key]
  server = serve({
    fetch: createApp(createMemoryDeps({ auth: { identityProvider: jwks.settings() } })).fetch,
    port: 0,
    hostname: '127.0.0.1',
  })
  await new Promise<void>((r) => server.once('listening', () => r()))
  mcpUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/brain/acme/projects/p1/mcp`
})
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()))
  await jwks.stop()
})

describe('MCP authorization', () => {
  it('leads the SDK from a 401 to the protected-resource metadata of the endpoint and its authorization server', async () => {
    const res = await postInitialize()
    expect(res.status).toBe(401)
    const { resourceMetadataUrl } = extractWWWAuthenticateParams(res)
    expect(resourceMetadataUrl?.href).toBe(mcpUrl.replace('/brain/', '/.well-known/oauth-protected-resource/brain/'))
    const metadata = await discoverOAuthProtectedResourceMetadata(mcpUrl, { resourceMetadataUrl })
    expect(metadata).toMatchObject({ resource: mcpUrl, authorization_servers: [ISSUER], bearer_methods_supported: ['header'] })
    // without the header's hint the SDK builds the path-suffixed well-known URL itself, and finds the same document
    expect(await discoverOAuthProtectedResourceMetadata(mcpUrl)).toEqual(metadata)
  })

  it('opens a session and lists tools with a token from the identity provider', async () => {
    const token = await idpToken(key, { scp: ['tools:read', 'tools:invoke'] })
    const { client } = await connectMcp(mcpUrl, token)
    const { tools } = await client.listTools()
    expect(tools.length).toBeGreaterThan(0)
    await client.close()
  })

  it('asks for tools:invoke with insufficient_scope when a read-only token initializes', async () => {
    const res = await postInitialize(await idpToken(key, { scp: ['tools:read'] }))
    expect(res.status).toBe(403)
    expect(extractWWWAuthenticateParams(res)).toMatchObject({ error: 'insufficient_scope', scope: 'tools:invoke' })
  })
})
