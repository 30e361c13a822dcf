/** GET /openapi.json: the routes as OpenAPI 3.1, written by hand next to the routes it describes. */

import { MANIFEST_FORMATS } from '../../lib/surface/formats'
import { USAGE_DAY_RETENTION_DAYS } from '../../lib/usage/ports'

const problem = { $ref: '#/components/responses/Problem' }
const p = (name: string, description: string, inPath = true) => ({
  name,
  in: inPath ? 'path' : 'query',
  required: inPath,
  schema: { type: 'string' },
  description,
})
const tenant = p('tenant', "Tenant id, equal to the token's tenant claim")
const project = p('project', "Project id, or '_tenant' for the tenant layer")
const name = p('name', 'Tool name (lower-case; trimmed and lower-cased on write)')
const yamlOrJson = {
  content: {
    'application/yaml': { schema: { type: 'string' } },
    'application/json': { schema: { $ref: '#/components/schemas/ServerTool' } },
  },
}
const clientToolsSchema = {
  type: 'array',
  maxItems: 64,
  description:
    'Tools the backend runs itself (spec §7): they join the surface like any tool; a call answers { isError: false, runOn: "client", name, params }',
  items: {
    type: 'object',
    required: ['name', 'description', 'inputSchema'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_-]{0,63}$' },
      description: { type: 'string' },
      inputSchema: { type: 'object', description: "JSON Schema, type 'object', ≤ 16 KiB, ≤ 16 levels" },
      labels: { type: 'array', items: { type: 'string' } },
      primary: { type: 'boolean', default: false },
    },
  },
}
const mcpSessionHeader = {
  name: 'Mcp-Session-Id',
  in: 'header',
  required: false,
  schema: { type: 'string' },
  description: 'The session (= process id) from the initialize response',
}
const mcpVersionHeader = {
  name: 'MCP-Protocol-Version',
  in: 'header',
  required: false,
  schema: { enum: ['2025-11-25', '2025-06-18', '2025-03-26'] },
  description: 'Absent = 2025-03-26; any other value is a 400',
}
const jsonRpc = {
  content: {
    'application/json': { schema: { description: 'A JSON-RPC 2.0 message (or a batch, 2025-03-26)', type: ['object', 'array'] } },
  },
}
const mcpPost = (summary: string, params: unknown[]) => ({
  summary,
  parameters: [...params, mcpSessionHeader, mcpVersionHeader],
  requestBody: jsonRpc,
  responses: {
    200: {
      description:
        'The JSON-RPC response: application/json, or text/event-stream for tools/call (notifications/tools/list_changed first when the call changed the tool list)',
    },
    202: { description: 'Notifications only: accepted' },
    400: { description: 'Parse error (-32700), missing Mcp-Session-Id, unsupported MCP-Protocol-Version' },
    403: problem,
    404: { description: "Unknown, expired, ended or another subject's session (-32001): initialize again" },
    406: { description: 'Accept must list application/json and text/event-stream' },
    415: { description: 'Content-Type must be application/json' },
    422: problem,
  },
})
const mcpGet = (params: unknown[]) => ({
  summary: 'No server-initiated stream: 405 (400 without a session, 404 for an unknown one)',
  parameters: [...params, mcpSessionHeader, mcpVersionHeader],
  responses: {
    400: { description: 'No session' },
    404: { description: 'Unknown session' },
    405: { description: 'Always, for a valid session' },
  },
})
const mcpDelete = (params: unknown[]) => ({
  summary: 'End the session: the process is deleted (scope tools:invoke)',
  parameters: [...params, mcpSessionHeader, mcpVersionHeader],
  responses: { 200: { description: 'Ended' }, 400: { description: 'No session' }, 404: { description: 'Unknown session' } },
})
const outcome = {
  200: {
    description: 'The call ran; `isError` tells whether the tool failed',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ToolOutcome' } } },
  },
}

/** A spawn's body, shared by the spawn route and the surface preview (which adds extraTools). */
const spawnBodyProperties = {
  recipe: { type: 'string', default: 'default' },
  engine: { type: 'string' },
  models: { type: 'array', items: { type: 'string', description: 'instance/model, primary first' } },
  clientTools: clientToolsSchema,
  reserve: {
    type: 'integer',
    minimum: 0,
    maximum: 64,
    description: "Manifest slots kept free for the client's own tools (default: the deployment's TOOL_BUDGET_RESERVE)",
  },
  allowedTools: {
    type: 'array',
    maxItems: 256,
    items: { type: 'string', minLength: 1, maxLength: 200 },
    description:
      "This process's own allow-set (tool names and '@label' selectors, resolved now): replaces the engine's allowedTools; the recipe's add/remove/defer and ranking still apply within it",
  },
}

export function openApiDocument() {
  return {
    openapi: '3.1.0',
    info: { title: 'Server Tools', version: '0.1.0', description: 'Multi-tenant tool registry and runtime for LLM agent backends.' },
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            "HS256 with the deployment secret, or RS256/ES256 from the identity provider's JWKS; every token has exp. A 401 (and a 403 for a missing scope) carries WWW-Authenticate: Bearer resource_metadata=… (RFC 9728). Writes to the _tenant layer and egress/allow.yaml need tenant:admin besides tools:write.",
        },
      },
      responses: {
        Problem: {
          description: 'RFC 9457 problem',
          content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
        },
      },
      schemas: {
        Problem: {
          type: 'object',
          properties: {
            type: { type: 'string' },
            title: { type: 'string' },
            status: { type: 'integer' },
            detail: { type: 'string' },
            code: { type: 'string' },
            errors: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  pointer: { type: 'string' },
                  line: { type: 'integer' },
                  column: { type: 'integer' },
                  message: { type: 'string' },
                },
              },
            },
          },
        },
        ServerTool: {
          type: 'object',
          required: ['type', 'description'],
          properties: {
            name: { type: 'string' },
            type: { type: 'string' },
            description: { type: 'string' },
            enabled: { type: 'boolean', default: true },
            primary: { type: 'boolean', default: false },
            labels: { type: 'array', items: { type: 'string' } },
            disabledSubTools: { type: 'array', items: { type: 'string' } },
            defaultDeferred: { type: 'boolean', default: false },
            promptHint: { type: 'string' },
            searchHint: { type: 'string' },
            parameters: { type: 'object' },
          },
        },
        ToolView: {
          allOf: [{ $ref: '#/components/schemas/ServerTool' }],
          properties: {
            source: { enum: ['project', 'tenant', 'bundled', 'builtin'] },
            version: { type: 'integer' },
            shadows: {
              type: 'array',
              items: { enum: ['tenant', 'bundled', 'builtin'] },
              description: 'Outer layers that define the same name, innermost first (listings and GET)',
            },
          },
        },
        Provenance: {
          type: 'object',
          required: ['source', 'shadows'],
          properties: {
            source: { enum: ['project', 'tenant', 'bundled', 'builtin'], description: 'The layer the name resolves from' },
            shadows: {
              type: 'array',
              items: { enum: ['tenant', 'bundled', 'builtin'] },
              description: 'Outer layers that also define it, innermost first',
            },
          },
        },
        ToolOutcome: { type: 'object', required: ['isError', 'content'], properties: { isError: { type: 'boolean' }, content: {} } },
        ToolUsageInsight: {
          type: 'object',
          description:
            'One role (recipe name, else engine name, else _unknown). demand = calls + discoveryHits; instants ISO-8601 or null.',
          required: [
            'role',
            'toolCount',
            'calls',
            'codeCalls',
            'refusals',
            'discoveryHits',
            'listedHits',
            'demand',
            'lastActivityAt',
            'tools',
            'describedNeverCalled',
            'deferredNeverDiscovered',
            'primaryNeverCalled',
            'recommendations',
            'callsPerDay',
          ],
          properties: {
            role: { type: 'string' },
            toolCount: { type: 'integer' },
            calls: { type: 'integer' },
            codeCalls: { type: 'integer', description: 'Of calls, those a code-mode script made (execute_code sibling calls)' },
            refusals: { type: 'integer', description: 'Calls refused before they ran: a quota, or the sandbox at capacity' },
            discoveryHits: { type: 'integer' },
            listedHits: { type: 'integer' },
            demand: { type: 'integer' },
            lastActivityAt: { type: ['string', 'null'], format: 'date-time' },
            tools: {
              type: 'array',
              description: 'By demand descending, then name',
              items: {
                type: 'object',
                required: [
                  'toolName',
                  'family',
                  'calls',
                  'codeCalls',
                  'refusals',
                  'discoveryHits',
                  'listedHits',
                  'demand',
                  'lastCallAt',
                  'lastDiscoveryAt',
                  'lastListedAt',
                ],
                properties: {
                  toolName: { type: 'string' },
                  family: { type: 'string' },
                  calls: { type: 'integer' },
                  codeCalls: { type: 'integer' },
                  refusals: { type: 'integer' },
                  discoveryHits: { type: 'integer' },
                  listedHits: { type: 'integer' },
                  demand: { type: 'integer' },
                  lastCallAt: { type: ['string', 'null'], format: 'date-time' },
                  lastDiscoveryAt: { type: ['string', 'null'], format: 'date-time' },
                  lastListedAt: { type: ['string', 'null'], format: 'date-time' },
                },
              },
            },
            describedNeverCalled: { type: 'array', items: { type: 'string' } },
            deferredNeverDiscovered: {
              type: ['array', 'null'],
              items: { type: 'string' },
              description: 'null when the role names no resolvable recipe or engine',
            },
            primaryNeverCalled: {
              type: ['array', 'null'],
              items: { type: 'string' },
              description: 'null when the role names no resolvable recipe or engine',
            },
            recommendations: {
              type: 'array',
              items: {
                type: 'object',
                required: ['kind', 'family', 'reason'],
                properties: { kind: { enum: ['promote', 'demote'] }, family: { type: 'string' }, reason: { type: 'string' } },
              },
            },
            callsPerDay: {
              type: 'object',
              description: `Calls per UTC day over the last min(days, ${USAGE_DAY_RETENTION_DAYS}) days up to today; only days with calls are listed. Day counts are kept ${USAGE_DAY_RETENTION_DAYS} days, and only since they were introduced: older calls are in the totals only`,
              required: ['from', 'to', 'counts'],
              properties: {
                from: { type: 'string', format: 'date' },
                to: { type: 'string', format: 'date' },
                counts: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['day', 'calls'],
                    properties: { day: { type: 'string', format: 'date' }, calls: { type: 'integer' } },
                  },
                },
              },
            },
          },
        },
      },
    },
    security: [{ bearer: [] }],
    paths: {
      '/.well-known/oauth-protected-resource': {
        get: {
          summary:
            'RFC 9728 metadata of the whole service: resource, authorization_servers (from the deployment settings), bearer_methods_supported, scopes_supported',
          security: [],
          responses: { 200: { description: 'Protected resource metadata' } },
        },
      },
      '/.well-known/oauth-protected-resource/{resource}': {
        get: {
          summary:
            "RFC 9728 metadata of one resource: brain/{tenant}, brain/{tenant}/projects/{p}/mcp or brain/{tenant}/projects/{p}/processes/{id}/mcp (the URL a 401's WWW-Authenticate names)",
          security: [],
          parameters: [p('resource', 'The resource path, may contain /')],
          responses: { 200: { description: 'Protected resource metadata' }, 404: problem },
        },
      },
      '/brain/{tenant}/tool-types': {
        get: {
          summary: 'Tool types with their parametersSchema',
          parameters: [tenant],
          responses: { 200: { description: 'Types sorted by typeId' }, default: problem },
        },
      },
      '/brain/{tenant}/projects/{project}/server-tools': {
        get: {
          summary: "Cascade-merged listing with each entry's source layer, and problems",
          parameters: [
            tenant,
            project,
            p('label', 'Only tools carrying this label', false),
            p('includeDisabled', 'true to include disabled documents', false),
          ],
          responses: { 200: { description: '{ tools, problems }' }, default: problem },
        },
      },
      '/brain/{tenant}/projects/{project}/server-tools/{name}': {
        get: {
          summary: 'Resolve one tool through the cascade (ETag = version)',
          parameters: [tenant, project, name],
          responses: { 200: { description: 'ToolView' }, 404: problem, 422: problem },
        },
        put: {
          summary: "Create or replace this layer's document (If-Match / If-None-Match: *)",
          parameters: [tenant, project, name],
          requestBody: yamlOrJson,
          responses: {
            200: { description: 'Updated' },
            201: { description: 'Created' },
            412: problem,
            413: problem,
            415: problem,
            422: problem,
          },
        },
        delete: {
          summary: "Delete this layer's document (outer layers show again)",
          parameters: [tenant, project, name],
          responses: { 204: { description: 'Deleted' }, 404: problem, 412: problem },
        },
      },
      '/brain/{tenant}/projects/{project}/tools': {
        get: {
          summary:
            'What the project can call: every tool after the cascade, packs expanded into sub-tools, each with its inputSchema (scope tools:read)',
          parameters: [tenant, project],
          responses: {
            200: {
              description:
                '{ tools: [{ name, description, labels, primary, deferred, source, typeId, pack?, aliases?, promptHint?, searchHint?, inputSchema }] (by name), problems }',
            },
            default: problem,
          },
        },
      },
      '/brain/{tenant}/projects/{project}/documents': {
        get: {
          summary:
            "This layer's documents (one snapshot): path, version, sha256 of the body, bytes, updatedAt, updatedBy; with bodies=true also the body (exports)",
          parameters: [
            tenant,
            project,
            p('prefix', 'Path prefix', false),
            {
              name: 'bodies',
              in: 'query',
              required: false,
              schema: { type: 'boolean', default: false },
              description: 'Include each body, up to 2 MiB of bodies an answer (documentBodies); the rest carry bodyOmitted: true',
            },
          ],
          responses: {
            200: { description: '{ documents: [{ path, version, sha256, bytes, updatedAt, updatedBy, body?, bodyOmitted? }] }' },
            400: problem,
          },
        },
      },
      '/brain/{tenant}/projects/{project}/documents/{path}': {
        get: {
          summary: 'A raw document through the cascade (X-Document-Source)',
          parameters: [tenant, project, p('path', 'Document path, may contain /')],
          responses: { 200: { description: 'The body' }, 404: problem },
        },
        put: {
          summary: 'Write a raw document (versioned like tools)',
          parameters: [tenant, project, p('path', 'Document path')],
          responses: { 200: { description: 'Updated' }, 201: { description: 'Created' }, 412: problem, 413: problem },
        },
        delete: {
          summary: 'Delete a raw document',
          parameters: [tenant, project, p('path', 'Document path')],
          responses: { 204: { description: 'Deleted' } },
        },
      },
      '/brain/{tenant}/projects/{project}/tools/{name}/invoke': {
        post: {
          summary:
            'Call a tool outside any process; a script refused for capacity (the sandbox queue is full) is a 503 OVERLOADED with Retry-After',
          parameters: [tenant, project, name],
          requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { params: { type: 'object' } } } } } },
          responses: { ...outcome, 400: problem, 401: problem, 403: problem, 503: problem },
        },
      },
      '/brain/{tenant}/projects/{project}/processes': {
        post: {
          summary:
            'Spawn a process: resolve the recipe, engine and @label selectors now and freeze the allowed list (spec §6); scope tools:invoke',
          parameters: [tenant, project],
          requestBody: {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  additionalProperties: false,
                  properties: spawnBodyProperties,
                },
              },
            },
          },
          responses: {
            201: {
              description:
                "The process (id, allowed, promoted, deferredByRecipe, keep, dropFirst, models, expiresAt) and warnings. deferredByRecipe is only the recipe's allowedToolsDefer; GET …/manifest shows every deferred tool",
            },
            400: problem,
            403: problem,
            422: problem,
          },
        },
      },
      '/brain/{tenant}/projects/{project}/processes/{id}': {
        get: {
          summary: 'A process record (404 once expired)',
          parameters: [tenant, project, p('id', 'Process id')],
          responses: { 200: { description: 'The process' }, 404: problem },
        },
      },
      '/brain/{tenant}/projects/{project}/processes/{id}/manifest': {
        get: {
          summary:
            "This turn's tool surface: tools (alphabetical), discoveryBlock, demotedDiscoveryBlock, promptHints, budget { limit, reserved, effective, demoted, demotedFamilies }; scope tools:read",
          parameters: [
            tenant,
            project,
            p('id', 'Process id'),
            {
              name: 'format',
              in: 'query',
              required: false,
              schema: { enum: [...MANIFEST_FORMATS], default: 'native' },
              description:
                "The tools array in that provider's wire shape: openai = Chat Completions, openai-responses = the Responses API's flat function tools, gemini = one Tool's functionDeclarations with parameters in Google's Schema subset (what it cannot carry is listed per tool in schemaDropped)",
            },
            p('extraTools', 'Skill tools for this turn (comma-separated or repeated): added as keep and triaged again', false),
            {
              name: 'deferLoading',
              in: 'query',
              required: false,
              schema: { type: 'boolean' },
              description:
                "format=anthropic or openai-responses: true appends deferred and demoted tools with defer_loading: true and the format's tool search tool (as many as maxTools leaves room for); false keeps the discovery block; absent: the model catalog's deferral decides (auto = native where every model of the chain has it)",
            },
            {
              name: 'strict',
              in: 'query',
              required: false,
              schema: { type: 'boolean' },
              description:
                "format=openai, openai-responses or anthropic: true renders strict: true on the tools whose schemas are inside the provider's strict subset, in rank order while the profile's strict caps have room; the body's strict names the strict tools and why each other one is not",
            },
          ],
          responses: { 200: { description: 'The manifest' }, 400: problem, 404: problem, 422: problem },
        },
      },
      '/brain/{tenant}/projects/{project}/processes/{id}/tool-calls': {
        post: {
          summary:
            "Call a tool through the process's surface (allowed list, floor, meta-tools; a deferred tool is activated); scope tools:invoke",
          parameters: [tenant, project, p('id', 'Process id')],
          requestBody: {
            content: {
              'application/json': {
                schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, params: { type: 'object' } } },
              },
            },
          },
          responses: {
            200: {
              description:
                'The call ran: `{ isError, content }`; for a client tool `{ isError: false, runOn: "client", name, params }` (the backend runs it with the validated params)',
              content: {
                'application/json': {
                  schema: {
                    oneOf: [
                      { $ref: '#/components/schemas/ToolOutcome' },
                      {
                        type: 'object',
                        required: ['isError', 'runOn', 'name', 'params'],
                        properties: {
                          isError: { const: false },
                          runOn: { const: 'client' },
                          name: { type: 'string' },
                          params: { type: 'object' },
                        },
                      },
                    ],
                  },
                },
              },
            },
            400: problem,
            403: problem,
            404: problem,
          },
        },
      },
      '/brain/{tenant}/projects/{project}/processes/{id}/client-tools': {
        put: {
          summary:
            "Replace the process's client tools (If-Match: the ETag of the last replacement); configured and built-in tools win a name clash, with a warning; scope tools:invoke",
          parameters: [tenant, project, p('id', 'Process id')],
          requestBody: {
            content: {
              'application/json': {
                schema: { type: 'object', additionalProperties: false, properties: { clientTools: clientToolsSchema } },
              },
            },
          },
          responses: {
            200: { description: '{ clientTools: names, version, warnings } with ETag' },
            400: problem,
            404: problem,
            412: problem,
          },
        },
      },
      '/brain/{tenant}/projects/{project}/mcp': {
        post: mcpPost(
          "MCP Streamable HTTP (2025-03-26, 2025-06-18, 2025-11-25). initialize spawns a process (?recipe=, ?model=instance/model, ?reserve=N) whose id is the Mcp-Session-Id; tools/list is this turn's budget-fitted manifest; tools/call goes through the process's surface. Scope tools:invoke to initialize or call, tools:read otherwise",
          [
            tenant,
            project,
            p('recipe', 'initialize: the recipe to spawn (default: default)', false),
            p('model', 'initialize: instance/model whose tool limit fits the list', false),
            {
              ...p('reserve', "initialize: slots kept for the client's own tools (0–64)", false),
              ...p(
                'allowedTools',
                "initialize: the process's own allow-set, comma-separated names and '@label' selectors (replaces the engine's)",
                false,
              ),
              schema: { type: 'integer', minimum: 0, maximum: 64 },
            },
          ],
        ),
        get: mcpGet([tenant, project]),
        delete: mcpDelete([tenant, project]),
      },
      '/brain/{tenant}/projects/{project}/processes/{id}/mcp': {
        post: mcpPost(
          'MCP for a process spawned through REST: the process in the path is the session (Mcp-Session-Id optional; if sent, it must be this id); initialize spawns nothing',
          [tenant, project, p('id', 'Process id')],
        ),
        get: mcpGet([tenant, project, p('id', 'Process id')]),
        delete: mcpDelete([tenant, project, p('id', 'Process id')]),
      },
      '/brain/{tenant}/projects/{project}/processes/{id}/diagnostics/empty-response': {
        post: {
          summary:
            'Phantom-tool diagnosis of an empty model response (spec §13.2); each phantom is logged once per process; scope tools:invoke',
          parameters: [tenant, project, p('id', 'Process id')],
          requestBody: {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['messages'],
                  properties: {
                    messages: {
                      type: 'array',
                      items: { type: 'object', required: ['role'], properties: { role: { type: 'string' }, content: {} } },
                    },
                    offeredTools: { type: 'array', items: {} },
                    finishReason: { type: 'string' },
                  },
                },
              },
            },
          },
          responses: {
            200: { description: '{ kind: phantom | blank | skipped, phantoms: [{ name, origin: prompt | user | context, firstReport }] }' },
            400: problem,
            404: problem,
          },
        },
      },
      '/brain/{tenant}/projects/{project}/surface/preview': {
        post: {
          summary:
            'What a process spawned now would get on its first turn — the spawn and the manifest computed by their own code, nothing stored; scope tools:read',
          parameters: [tenant, project],
          requestBody: {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  additionalProperties: false,
                  properties: {
                    ...spawnBodyProperties,
                    extraTools: {
                      type: 'array',
                      maxItems: 256,
                      items: { type: 'string' },
                      description: "Skill tools for the first turn (as the manifest route's extraTools)",
                    },
                  },
                },
              },
            },
          },
          responses: {
            200: {
              description: 'The preview',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: [
                      'recipe',
                      'engine',
                      'models',
                      'allowed',
                      'deferredByRecipe',
                      'warnings',
                      'manifest',
                      'families',
                      'provenance',
                    ],
                    properties: {
                      recipe: { type: 'string' },
                      engine: { type: 'string' },
                      models: { type: 'array', items: { type: 'string' } },
                      allowed: { type: 'array', items: { type: 'string' }, description: 'The frozen allowed list a spawn would store' },
                      deferredByRecipe: {
                        type: 'array',
                        items: { type: 'string' },
                        description:
                          "Deferred by the recipe's allowedToolsDefer (as in the spawn answer); tools deferred by their own default are in families with status deferred",
                      },
                      warnings: { type: 'array', items: { type: 'string' }, description: 'The spawn warnings' },
                      manifest: {
                        type: 'object',
                        description: 'Exactly the body of GET …/processes/{id}/manifest?format=native for the first turn',
                      },
                      families: {
                        type: 'array',
                        description:
                          'Every visible tool by triage unit: the floor and kept groups in rank order, then demoted ones in demotion order, then deferred tools by family',
                        items: {
                          type: 'object',
                          required: ['family', 'tools', 'status', 'tier'],
                          properties: {
                            family: { type: 'string' },
                            tools: { type: 'array', items: { type: 'string' } },
                            status: { enum: ['kept', 'demoted', 'deferred'] },
                            tier: {
                              enum: ['floor', 'activated', 'keep', 'add', 'handwritten', 'pack', 'dropFirst'],
                              description:
                                "The triage class (spec §14.2), most important first: handwritten = a single tool, configured in any layer or built in (not a pack sub-tool); pack = a pack's sub-tool (`<pack>__<op>`). For deferred groups: the tier they would rank in once activated",
                            },
                          },
                        },
                      },
                      provenance: {
                        type: 'object',
                        description: 'Per visible tool (a pack sub-tool: its pack)',
                        additionalProperties: { $ref: '#/components/schemas/Provenance' },
                      },
                      code: {
                        type: 'object',
                        description:
                          "Present when the turn is in code mode (the recipe's surface: code, or the model chain's endpoint profiles): execute_code's declaration as the model reads it, and its size",
                        required: [
                          'declaration',
                          'declarationBytes',
                          'estimatedTokens',
                          'budgetBytes',
                          'budgetBy',
                          'chosenBy',
                          'declared',
                          'overBudget',
                        ],
                        properties: {
                          declaration: { type: 'string', description: 'TypeScript' },
                          declarationBytes: { type: 'integer', description: 'UTF-8 bytes' },
                          estimatedTokens: {
                            type: 'integer',
                            description: 'About this many tokens (a pre-tokenizer count; no tokenizer is bundled)',
                          },
                          budgetBytes: { type: 'integer' },
                          budgetBy: { enum: ['setting', 'codeDeclarationBytes', 'maxSchemaBytes'] },
                          chosenBy: { enum: ['recipe', 'endpoint'] },
                          declared: { type: 'array', items: { type: 'string' } },
                          overBudget: { type: 'array', items: { type: 'string' } },
                        },
                      },
                    },
                  },
                },
              },
            },
            400: problem,
            403: problem,
            422: problem,
          },
        },
      },
      '/brain/{tenant}/secrets': {
        get: {
          summary: "Names of the tenant's secrets (values are write-only)",
          parameters: [tenant],
          responses: { 200: { description: '{ secrets: [{ name }] }' }, default: problem },
        },
      },
      '/brain/{tenant}/secrets/{name}': {
        put: {
          summary: 'Store a secret for ${secret:NAME} references (scope secrets:write)',
          parameters: [tenant, p('name', 'Secret name: a letter, then letters, digits, _ or -')],
          requestBody: {
            content: {
              'application/json': {
                schema: { type: 'object', required: ['value'], properties: { value: { type: 'string', maxLength: 4096 } } },
              },
            },
          },
          responses: { 200: { description: 'Updated' }, 201: { description: 'Created' }, 400: problem, 403: problem },
        },
        delete: {
          summary: 'Delete a secret (scope secrets:write)',
          parameters: [tenant, p('name', 'Secret name')],
          responses: { 204: { description: 'Deleted' }, 404: problem },
        },
      },
      '/brain/{tenant}/models/observed-limits': {
        post: {
          summary:
            "Learn an endpoint's tool limit from its rejection (spec §14.1): believed only when requestedToolCount exceeds the maximum named, never below the deployment's minimum, forgotten after its TTL or when the catalog's maxTools changes; the minimum live one is kept per tenant and instance/model; scope limits:report",
          parameters: [tenant],
          requestBody: {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['instance', 'model', 'errorMessage'],
                  properties: {
                    instance: { type: 'string' },
                    model: { type: 'string' },
                    errorMessage: { type: 'string' },
                    requestedToolCount: { type: 'integer', description: 'Length of the tools array that was rejected (required to learn)' },
                    project: { type: 'string', description: "Whose catalog decides the limit in force (default '_tenant')" },
                  },
                },
              },
            },
          },
          responses: {
            200: { description: '{ learned, model, observed?, limit, previous?, expiresAt?, reason?, advice? }' },
            400: problem,
          },
        },
      },
      '/brain/{tenant}/admin/projects/{project}/insights/tool-usage': {
        get: {
          summary:
            'Tool usage per role (spec §14.4) with the discovery funnel and promote/demote recommendations; read-only (scope insights:read)',
          parameters: [
            tenant,
            project,
            {
              ...p('days', "The funnel's window in days (1–3650, default 30)", false),
              schema: { type: 'integer', minimum: 1, maximum: 3650 },
            },
          ],
          responses: {
            200: {
              description: 'Roles by demand descending, then role; [] when nothing was recorded',
              content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/ToolUsageInsight' } } } },
            },
            400: problem,
            401: problem,
            403: problem,
          },
        },
      },
      '/brain/{tenant}/audit': {
        get: {
          summary:
            "The tenant's audit log, newest first: every write, and every refusal (401, 403, egress, sandbox, budget) — past a tenant's first 20 refusals a minute, one digest entry per kind of refusal; read-only (scope audit:read or tenant:admin)",
          parameters: [
            tenant,
            p('from', 'Earliest time, ISO-8601 UTC (inclusive)', false),
            p('to', 'Latest time, ISO-8601 UTC (inclusive; a bare date means the whole day)', false),
            p('actor', "The token subject ('sub')", false),
            p('action', "An action ('document.put'), or a prefix ending in '.' ('secret.')", false),
            p('target', "A target ('projects/p1/documents/a.yaml'), or a prefix ending in '/'", false),
            { ...p('limit', 'Entries per page (1–200, default 50)', false), schema: { type: 'integer', minimum: 1, maximum: 200 } },
            p('cursor', "The previous page's 'next'", false),
          ],
          responses: {
            200: {
              description:
                '{ entries: [{ tenant, id, at, actor: { subject?, issuer? }, action, target, outcome, status?, reason?, versionBefore?, versionAfter?, contentHash?, client?, requestId?, traceId?, sourceAddress?, repeated?, firstAt?, lastAt?, samples?: { targets, sourceAddresses }, expiresAt }], next? } — `repeated` marks a digest of that many refusals of one kind',
            },
            400: problem,
            401: problem,
            403: problem,
          },
        },
      },
      '/brain/{tenant}/quotas': {
        get: {
          summary:
            "The quota rules that apply to a project (default '_tenant'): every layer's rules (bundled, _tenant, project), each window's limit, reserved use, what is left and when it resets",
          parameters: [tenant, p('project', "A project id, or '_tenant' (the default)", false)],
          responses: {
            200: {
              description:
                '{ project, rules: [{ layer, index, match, rate?, volume?, windows: [{ kind (rate | burst | volume | tokens), limit, used, remaining, resetsAt, resetsInSeconds, refusedHere }] }] }; a tokens window counts model tokens (limit and used in tokens)',
            },
            400: problem,
            401: problem,
            403: problem,
          },
        },
      },
    } as Record<string, unknown>,
  }
}
