/**
 * Data for the console's browser tests and screenshots, written through the public API of a
 * running service: tools in three layers, a pack, a hostile description,
 * a recipe and engine, a small model catalog, and usage from a process's tool calls; and a broken
 * document written into the stopped service's store (storeBrokenTool).
 */
import { join } from 'node:path'
import { startEmulators } from '../../functions/emulators'
import { systemClock } from '../../lib/runtime/clock'
import { S3BlobStore } from '../../lib/stores/aws/blob-store'
import { destroyAwsClients, makeAwsClients } from '../../lib/stores/aws/clients'
import { DynamoDocumentStore } from '../../lib/stores/aws/document-store'

/** A quota selector holding markup: the console must draw it as text. */
export const QUOTA_XSS_LABEL = '<img src=x onerror="window.__pwned=3">'

export const XSS_DESCRIPTION = 'Looks harmless <img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script>'

const PETS_SPEC = `openapi: 3.0.3
info: { title: Pets, version: "1" }
servers: [{ url: "https://pets.example.com/v1" }]
paths:
  /pets:
    get: { operationId: listPets, summary: List pets, parameters: [{ name: limit, in: query, schema: { type: integer } }], responses: { "200": { description: ok } } }
    post: { operationId: createPet, summary: Create a pet, requestBody: { content: { application/json: { schema: { type: object, properties: { name: { type: string } } } } } }, responses: { "201": { description: ok } } }
  /pets/{petId}:
    get: { operationId: showPetById, summary: One pet, parameters: [{ name: petId, in: path, required: true, schema: { type: string } }], responses: { "200": { description: ok } } }
`

const indent = (text: string, by: string) =>
  text
    .split('\n')
    .map((l) => (l ? by + l : l))
    .join('\n')

/** A tool document no write path accepts; the console must still show it (see storeBrokenTool). */
export const BROKEN_TOOL = {
  scope: 'demo#p1',
  path: 'server-tools/broken.yaml',
  body: 'type: doc_lookup\ndescription: Broken on purpose\nparameters:\n  path: 42\n',
}

/**
 * Puts BROKEN_TOOL straight into the store of a stopped `npm start` (its DATA_DIR): every route
 * refuses it, but a store written before writes were checked can hold one, and the listing must
 * report it with its line.
 */
export async function storeBrokenTool(dataDir: string) {
  const emulators = await startEmulators({ s3Directory: join(dataDir, 's3'), dynamoPath: join(dataDir, 'dynamodb') })
  const clients = makeAwsClients({
    region: 'us-east-1',
    dynamoEndpoint: emulators.dynamoEndpoint,
    s3Endpoint: emulators.s3Endpoint,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  })
  try {
    const blobs = new S3BlobStore({ s3: clients.s3, bucket: 'server-tools-blobs' })
    const store = new DynamoDocumentStore({ dynamo: clients.dynamo, tableName: 'server-tools-documents', blobs, clock: systemClock })
    await store.put({ key: { scope: BROKEN_TOOL.scope, path: BROKEN_TOOL.path }, body: BROKEN_TOOL.body, actor: 'before-checks' })
  } finally {
    destroyAwsClients(clients)
    await emulators.close()
  }
}

export async function seedConsoleData(url: string, token: string) {
  const auth = { authorization: `Bearer ${token}` }
  const send = async (method: string, path: string, body: string, type = 'application/yaml') => {
    const res = await fetch(`${url}${path}`, { method, headers: { ...auth, 'content-type': type }, body })
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${await res.text()}`)
    return res.json().catch(() => undefined) as Promise<any>
  }
  const tool = (project: string, name: string, yaml: string) => send('PUT', `/projects/${project}/server-tools/${name}`, yaml)
  const doc = (project: string, path: string, body: string) => send('PUT', `/projects/${project}/documents/${path}`, body)

  await tool(
    '_tenant',
    'handbook',
    'type: doc_lookup\ndescription: Read the team handbook.\nlabels: [docs]\nparameters:\n  path: documents/getting-started.md\n',
  )
  await tool(
    'p1',
    'handbook',
    'type: doc_lookup\ndescription: Project handbook\nlabels: [docs, project]\nparameters:\n  path: documents/tools-overview.md\n',
  )
  await tool(
    'p1',
    'doc_errors',
    'type: doc_lookup\ndescription: Our own error catalogue, over the bundled one.\nprimary: true\nlabels: [docs]\npromptHint: Quote the error code you looked up.\nparameters:\n  path: documents/errors.md\n',
  )
  await tool(
    'p1',
    'hostile',
    `type: doc_lookup\ndescription: ${JSON.stringify(XSS_DESCRIPTION)}\nlabels: [odd]\nparameters:\n  path: documents/discovery.md\n`,
  )
  await tool(
    'p1',
    'retired',
    'type: doc_lookup\ndescription: An old tool, switched off.\nenabled: false\nlabels: [docs]\nparameters:\n  path: documents/discovery.md\n',
  )
  await tool(
    'p1',
    'pets',
    `type: rest_api\ndescription: The pet store API.\nlabels: [pets]\nparameters:\n  specInline: |\n${indent(PETS_SPEC, '    ')}`,
  )
  await doc(
    'p1',
    'engines/helper.yaml',
    'allowedTools: [tool_list, tool_description, whoami, handbook, doc_errors, "@pets", "@docs", "@odd"]\nroles: [worker]\n',
  )
  await doc(
    'p1',
    'recipes/coder.yaml',
    'engine: helper\nallowedToolsDefer: [handbook]\nallowedToolsDropFirst: [doc_errors]\nmodels: [tiny/small]\n',
  )
  await doc('p1', 'models/tiny/_provider.yaml', 'wireType: openai\nmaxTools: 4\n')
  // code mode chosen by the model's profile, not the recipe; the hostile description is declared
  await doc('p1', 'models/coding/_provider.yaml', 'wireType: anthropic\nsurface: code\n')
  await doc('p1', 'recipes/scripter.yaml', 'engine: helper\nallowedToolsAdd: [hostile]\nmodels: [coding/big]\n')

  // quotas: one rule spent by the refused call below, a token cap, and a rule whose selector holds markup
  await doc(
    'p1',
    'quotas.yaml',
    `rules:\n  - match: { tool: whoami }\n    rate: { requests: 100, per: hour }\n  - match: { tool: doc_errors }\n    volume: { requests: 1, per: day }\n  - match: { role: coder, type: prompt_template }\n    volume: { tokens: 200000, per: day }\n  - match: { label: ${JSON.stringify(QUOTA_XSS_LABEL)} }\n    rate: { requests: 5, per: minute }\n`,
  )

  // usage outside any process: the invoke route counts under the role _unknown
  await send('POST', '/projects/p1/tools/whoami/invoke', JSON.stringify({ params: {} }), 'application/json')
  // doc_errors once, then refused by its quota (429): a refusal under _unknown
  await send('POST', '/projects/p1/tools/doc_errors/invoke', JSON.stringify({ params: {} }), 'application/json')
  const refused = await fetch(`${url}/projects/p1/tools/doc_errors/invoke`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ params: {} }),
  })
  if (refused.status !== 429) throw new Error(`the quota did not refuse: ${refused.status} ${await refused.text()}`)
  // calls from code: a code-mode recipe whose script calls whoami twice
  await doc('p1', 'recipes/automator.yaml', 'engine: helper\nsurface: code\n')
  const automator = await send('POST', '/projects/p1/processes', JSON.stringify({ recipe: 'automator' }), 'application/json')
  const code = 'const a = await tools.whoami({}); const b = await tools.whoami({}); [a, b].length'
  const ran = await send(
    'POST',
    `/projects/p1/processes/${automator.id}/tool-calls`,
    JSON.stringify({ name: 'execute_code', params: { code } }),
    'application/json',
  )
  if (ran.isError) throw new Error(`the script failed: ${JSON.stringify(ran)}`)
  // usage: the role "coder" describes the deferred handbook three times and calls it once (a
  // promote recommendation), calls whoami, and lists the tools
  const spawned = await send('POST', '/projects/p1/processes', JSON.stringify({ recipe: 'coder' }), 'application/json')
  const call = (name: string, params: Record<string, unknown>) =>
    send('POST', `/projects/p1/processes/${spawned.id}/tool-calls`, JSON.stringify({ name, params }), 'application/json')
  for (let i = 0; i < 3; i++) await call('tool_description', { names: ['handbook'] })
  await call('handbook', {})
  for (let i = 0; i < 5; i++) await call('whoami', {})
  await call('tool_list', {})
  // counts reach the table about a second after the first one (docs/guide/usage.md)
  const deadline = Date.now() + 10_000
  for (;;) {
    const roles = (await (await fetch(`${url}/admin/projects/p1/insights/tool-usage`, { headers: auth })).json()) as any[]
    if (
      roles.some((r) => r.role === 'coder' && r.calls >= 10) &&
      roles.some((r) => r.role === '_unknown' && r.refusals >= 1) &&
      roles.some((r) => r.role === 'automator' && r.codeCalls >= 2)
    )
      return { processId: spawned.id as string }
    if (Date.now() > deadline) throw new Error(`usage did not arrive: ${JSON.stringify(roles)}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}
