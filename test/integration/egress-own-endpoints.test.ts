/**
 * The service's own listeners are never reachable by a tool, whatever the allow-list says (issue
 * 11, F4). The deployment here allow-lists 127.0.0.1 — as one does for a local MCP server — and
 * runs on the dynalite and s3rver the test setup started; tenant t2 writes `rest` tools aimed at
 * them, and at the service's own HTTP port, through the HTTP API as a tenant would.
 * Every address in this file is 127.0.0.1.
 */

import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { type ServerType, serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createAwsDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { ownEndpointsFromEnv } from '../../functions/settings'
import { deploymentAllowList } from '../../lib/egress/allow-list'
import { MemorySecretStore } from '../../lib/secrets/memory'
import { destroyAwsClients } from '../../lib/stores/aws/clients'
import { observedLimitsTableSpec } from '../../lib/stores/aws/observed-limit-store'
import { processesTableSpec } from '../../lib/stores/aws/process-store'
import { documentsTableSpec, ensureBucket, ensureTable } from '../../lib/stores/aws/provision'
import { toolUsageTableSpec } from '../../lib/stores/aws/tool-usage-store'
import { TEST_CREDENTIALS, TEST_REGION, uniqueSuffix } from '../support/aws'
import { client, TEST_SECRET, tokenFor } from '../support/http'

const dynamoEndpoint = inject('dynamoEndpoint')
const s3Endpoint = inject('s3Endpoint')
const ownEndpoints = ownEndpointsFromEnv({})
const LOOPBACK_REFUSAL = 'outbound calls to a loopback address are not allowed (127.0.0.1); ask an administrator to allow-list it.'
/** The refusal after the rest tool's "<METHOD> <url> was not called: " (the URL is the tenant's own). */
const why = (message = '') => message.slice(message.indexOf('was not called: ') + 'was not called: '.length)

let deps: ReturnType<typeof createAwsDeps>
let names: { documentsTable: string; toolUsageTable: string; processesTable: string; observedLimitsTable: string; bucket: string }
let t1: ReturnType<typeof client>
let t2: ReturnType<typeof client>

/** A loopback server of the test: allow-listed like any 127.0.0.1 port, it redirects where it is told. */
let relay: http.Server
let relayBase: string
const relayed: string[] = []
/** The app itself on a real port, as `npm start` runs it. */
let listener: ServerType
let appBase: string

beforeAll(async () => {
  const suffix = uniqueSuffix()
  names = {
    documentsTable: `own-docs-${suffix}`,
    toolUsageTable: `own-usage-${suffix}`,
    processesTable: `own-procs-${suffix}`,
    observedLimitsTable: `own-limits-${suffix}`,
    bucket: `own-blobs-${suffix}`,
  }
  const config = {
    ...names,
    jwtSecret: TEST_SECRET,
    region: TEST_REGION,
    credentials: TEST_CREDENTIALS,
    dynamoEndpoint,
    s3Endpoint,
    secrets: new MemorySecretStore(),
    egressAllow: deploymentAllowList({ EGRESS_ALLOW_HOSTS: '127.0.0.1' }),
    ownEndpoints,
  }
  deps = createAwsDeps(config)
  await Promise.all([
    ensureTable(deps.clients.dynamo, documentsTableSpec(names.documentsTable)),
    ensureTable(deps.clients.dynamo, toolUsageTableSpec(names.toolUsageTable)),
    ensureTable(deps.clients.dynamo, processesTableSpec(names.processesTable)),
    ensureTable(deps.clients.dynamo, observedLimitsTableSpec(names.observedLimitsTable)),
    ensureBucket(deps.clients.s3, names.bucket),
  ])
  const app = createApp(deps)
  t1 = client(app, await tokenFor('t1'))
  t2 = client(app, await tokenFor('t2'))

  relay = http.createServer((req, res) => {
    relayed.push(`${req.method} ${req.url}`)
    const to = new URL(req.url!, 'http://127.0.0.1').searchParams.get('to')
    if (to) res.writeHead(307, { location: to }).end()
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{"relay":true}')
  })
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r))
  relayBase = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`

  // what functions/local.ts does once its server listens
  listener = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise<void>((r) => listener.once('listening', () => r()))
  appBase = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`
  ownEndpoints.add(appBase)
})

afterAll(async () => {
  relay?.closeAllConnections()
  await new Promise((r) => relay?.close(r))
  ;(listener as http.Server | undefined)?.closeAllConnections()
  await new Promise((r) => listener?.close(r))
  await deps?.usage.flush()
  if (deps) destroyAwsClients(deps.clients)
})

const restTool = (parameters: string) => `type: rest\ndescription: A tool of tenant t2.\nparameters:\n${parameters}`

async function writeAndCall(name: string, parameters: string) {
  const put = await t2.put(`/brain/t2/projects/p1/server-tools/${name}`, restTool(parameters))
  expect(put.status, await put.clone().text()).toBe(201)
  const res = await t2.post(`/brain/t2/projects/p1/tools/${name}/invoke`, { params: {} })
  expect(res.status).toBe(200)
  return (await res.json()) as { isError: boolean; content: { message: string; reason?: string } }
}

describe('the embedded stores under an allow-list that opens 127.0.0.1', () => {
  it("refuses a tenant's rest tool that posts an UpdateItem to dynalite, and the other tenant's document stays as it was", async () => {
    const victim = await t1.put(
      '/brain/t1/projects/p1/server-tools/notes',
      'type: doc_lookup\ndescription: Notes of t1.\nparameters:\n  path: notes.md\n',
    )
    expect(victim.status).toBe(201)
    const out = await writeAndCall(
      'overwrite',
      [
        `  url: ${dynamoEndpoint}/`,
        '  method: POST',
        '  headers:',
        '    X-Amz-Target: DynamoDB_20120810.UpdateItem',
        '    Content-Type: application/x-amz-json-1.0',
        '  bodyTemplate:',
        `    TableName: ${names.documentsTable}`,
        '    Key: { scope: { S: "t1#p1" }, path: { S: "server-tools/notes.yaml" } }',
        '    UpdateExpression: "SET body = :b"',
        '    ExpressionAttributeValues: { ":b": { S: "owned" } }',
        '',
      ].join('\n'),
    )
    expect(out.isError).toBe(true)
    expect(out.content.reason).toBe('denied')
    // after the tenant's own URL, the refusal any loopback address gets: nothing says the port is ours
    expect(why(out.content.message)).toBe(LOOPBACK_REFUSAL)
    const after = await t1.get('/brain/t1/projects/p1/server-tools/notes')
    expect(after.status).toBe(200)
    expect(after.headers.get('etag')).toBe(victim.headers.get('etag'))
    expect((await after.json()).description).toBe('Notes of t1.')
  })

  it("refuses a tenant's rest tool that lists the s3rver bucket", async () => {
    const out = await writeAndCall('list_blobs', `  url: ${s3Endpoint}/${names.bucket}\n  query: { list-type: "2" }\n`)
    expect(out.isError).toBe(true)
    expect(out.content.reason).toBe('denied')
    // worded like any loopback refusal: nothing tells a tenant that this port is one of ours
    expect(why(out.content.message)).toBe(LOOPBACK_REFUSAL)
  })

  it('refuses a redirect from an allowed loopback port to the dynalite port, after reaching the allowed one', async () => {
    relayed.length = 0
    const reached = await writeAndCall('relay_ok', `  url: ${relayBase}/plain\n`)
    expect(reached).toMatchObject({ isError: false, content: { body: { relay: true } } })
    const out = await writeAndCall(
      'relay_dynamo',
      `  url: ${relayBase}/hop\n  query: { to: "${dynamoEndpoint}/" }\n  method: POST\n  bodyTemplate: { TableName: x }\n`,
    )
    expect(out.isError).toBe(true)
    expect(out.content.reason).toBe('denied')
    expect(relayed).toEqual(['GET /plain', `POST /hop?to=${encodeURIComponent(`${dynamoEndpoint}/`)}`])
  })

  it("refuses the service's own HTTP port, in another loopback spelling too", async () => {
    const port = new URL(appBase).port
    for (const [name, url] of [
      ['self', `${appBase}/brain/t1/projects/p1/server-tools`],
      ['self_zero', `http://0.0.0.0:${port}/`],
    ]) {
      const out = await writeAndCall(name, `  url: ${url}\n`)
      expect(out.isError, url).toBe(true)
      expect(why(out.content.message), url).toMatch(/^outbound calls to .* are not allowed/)
      expect(why(out.content.message), url).not.toMatch(new RegExp(`${port}|endpoint|this service`))
    }
  })
})
