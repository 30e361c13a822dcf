/**
 * `prompt_template` tools against local HTTP servers on 127.0.0.1 that speak the OpenAI chat
 * completions and Anthropic messages wire formats as their API references define them
 * (request and answer shapes, error bodies, auth headers). Calls go through the dispatcher and
 * the egress guard with 127.0.0.1 allow-listed; nothing here talks to any other address.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { AllowList } from '../../lib/egress/allow-list'
import { EgressClient } from '../../lib/egress/client'
import { isServerToolsError } from '../../lib/errors'
import { ModelCatalog } from '../../lib/llm/catalog'
import { MemorySecretStore } from '../../lib/secrets/memory'
import { projectGate } from '../../lib/tools/project-gate'
import { failure } from '../support/failure'

// ───────────────────────── provider servers ─────────────────────────

interface Seen {
  path: string
  headers: http.IncomingHttpHeaders
  body: any
}
type Reply = { status?: number; body: unknown; delayMs?: number }

const OPENAI_KEY = 'sk-test-openai-4c1d9e'
const ANTHROPIC_KEY = 'sk-ant-test-77b0a2'

class ProviderServer {
  readonly seen: Seen[] = []
  /** What the next calls answer; the default is a plausible completion. */
  reply?: (seen: Seen) => Reply
  private server!: http.Server
  url = ''

  async start() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c) => chunks.push(c))
      req.on('end', () => {
        const seen: Seen = { path: req.url ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') }
        this.seen.push(seen)
        const reply = this.answer(seen)
        const send = () => {
          if (res.destroyed) return
          res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body))
        }
        if (reply.delayMs) setTimeout(send, reply.delayMs)
        else send()
      })
    })
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }

  async stop() {
    this.server.closeAllConnections()
    await new Promise<void>((r) => this.server.close(() => r()))
  }

  last() {
    return this.seen[this.seen.length - 1]
  }

  private answer(seen: Seen): Reply {
    if (seen.path === '/v1/chat/completions') {
      if (seen.headers.authorization !== `Bearer ${OPENAI_KEY}`) {
        return {
          status: 401,
          body: {
            error: {
              message: `Incorrect API key provided: ${String(seen.headers.authorization).slice(7)}.`,
              type: 'invalid_request_error',
              param: null,
              code: 'invalid_api_key',
            },
          },
        }
      }
    } else if (seen.path === '/v1/messages') {
      if (seen.headers['x-api-key'] !== ANTHROPIC_KEY)
        return { status: 401, body: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } } }
      if (seen.headers['anthropic-version'] !== '2023-06-01')
        return {
          status: 400,
          body: { type: 'error', error: { type: 'invalid_request_error', message: 'anthropic-version header is required' } },
        }
      if (typeof seen.body?.max_tokens !== 'number')
        return { status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } } }
    } else return { status: 404, body: { error: { message: `no route ${seen.path}` } } }
    if (this.reply) return this.reply(seen)
    return seen.path === '/v1/messages' ? anthropicText('Paris.', seen.body.model) : openAiText('Paris.', seen.body.model)
  }
}

function openAiText(content: string | null, model = 'gpt-4o-mini-2024-07-18', extra: Record<string, unknown> = {}, finish = 'stop'): Reply {
  return {
    body: {
      id: 'chatcmpl-123',
      object: 'chat.completion',
      created: 1_700_000_000,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content, refusal: null, ...extra }, logprobs: null, finish_reason: finish }],
      usage: { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 },
    },
  }
}

function anthropicText(text: string, model = 'claude-3-5-haiku-20241022'): Reply {
  return {
    body: {
      id: 'msg_01',
      type: 'message',
      role: 'assistant',
      model,
      content: [
        { type: 'text', text: text.slice(0, 3) },
        { type: 'text', text: text.slice(3) },
      ],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 30, output_tokens: 5, cache_creation_input_tokens: 10, cache_read_input_tokens: 2 },
    },
  }
}

function anthropicToolUse(input: unknown): Reply {
  return {
    body: {
      id: 'msg_02',
      type: 'message',
      role: 'assistant',
      model: 'claude-3-5-haiku-20241022',
      content: [{ type: 'tool_use', id: 'toolu_01', name: 'record_answer', input }],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 50, output_tokens: 12 },
    },
  }
}

/** The error a call throws, synchronously or as a rejection. */

// ───────────────────────── fixtures ─────────────────────────

const T = 'acme'
const P = 'p1'
let provider: ProviderServer
let deps: ReturnType<typeof createMemoryDeps>
let secrets: MemorySecretStore

const putDoc = (path: string, body: string, project = '_tenant') => deps.documents.put(T, project, path, body, { actor: 'tester' })
const putTool = (name: string, body: string) => deps.tools.put(T, P, name, body, { actor: 'tester' })
const call = (name: string, params: unknown) =>
  deps.dispatcher.call(projectGate(deps.tools, T, P), { tenant: T, project: P, subject: 'tester' }, name, params)

async function catalog() {
  await putDoc(
    'models/oai/_provider.yaml',
    `wireType: openai\nbaseUrl: ${provider.url}/v1\napiKey: \${secret:OPENAI_KEY}\nsizes:\n  small: mini\nmaxTools: 128\n`,
  )
  await putDoc('models/oai/mini.yaml', 'modelId: gpt-4o-mini-2024-07-18\nmaxOutputTokens: 500\nmaxTools: 64\npricing: { input: 0.15 }\n')
  await putDoc('models/ant/_provider.yaml', `wireType: anthropic\nbaseUrl: ${provider.url}\napiKey: \${secret:ANTHROPIC_KEY}\n`)
  await secrets.put(T, 'OPENAI_KEY', OPENAI_KEY)
  await secrets.put(T, 'ANTHROPIC_KEY', ANTHROPIC_KEY)
}

const template = (model: string, extra = '') => `type: prompt_template
description: Answer a geography question.
parameters:
  promptPrefix: |
    You are a geography tutor for {{audience}}.
    Answer briefly.
  model: ${model}
  inputs:
    - { name: audience, type: string }
    - { name: question, type: string }
    - { name: context, type: object, required: false }
${extra}`

beforeAll(async () => {
  provider = new ProviderServer()
  await provider.start()
})
afterAll(async () => {
  await provider.stop()
})
beforeEach(async () => {
  provider.reply = undefined
  secrets = new MemorySecretStore()
  deps = createMemoryDeps({ bundledFiles: [], secrets, egress: new EgressClient({ allow: AllowList.of({ hosts: ['127.0.0.1'] }) }) })
  await catalog()
})

// ───────────────────────── OpenAI chat completions ─────────────────────────

describe('prompt_template over OpenAI chat completions', () => {
  it('renders the fixed prefix with placeholders and the remaining inputs, and returns text, model and usage', async () => {
    await putTool('geo', template('oai/mini', '  temperature: 0.2\n  maxTokens: 200\n'))
    const outcome = await call('geo', { audience: 'children', question: 'What is the capital of France?', context: { unit: 'Europe' } })
    expect(outcome).toEqual({ isError: false, content: { text: 'Paris.', model: 'oai/mini', usage: { inputTokens: 42, outputTokens: 7 } } })
    const { path, body, headers } = provider.last()
    expect(path).toBe('/v1/chat/completions')
    expect(headers.authorization).toBe(`Bearer ${OPENAI_KEY}`)
    expect(body).toEqual({
      model: 'gpt-4o-mini-2024-07-18',
      messages: [
        {
          role: 'user',
          content:
            'You are a geography tutor for children.\nAnswer briefly.\n\n<question>\nWhat is the capital of France?\n</question>\n\n<context>\n{"unit":"Europe"}\n</context>',
        },
      ],
      max_completion_tokens: 200,
      temperature: 0.2,
    })
  })

  it('leaves an absent optional input out and caps maxTokens at the model catalog maxOutputTokens', async () => {
    await putTool('geo', template('oai/mini', '  maxTokens: 4000\n'))
    await call('geo', { audience: 'adults', question: 'Capital of Peru?' })
    const { body } = provider.last()
    expect(body.messages[0].content).not.toContain('<context>')
    expect(body.max_completion_tokens).toBe(500)
    expect(body).not.toHaveProperty('temperature')
  })

  it('picks the model by modelSize from the provider sizes when model names an instance', async () => {
    await putTool('geo', template('oai', '  modelSize: small\n'))
    const outcome = await call('geo', { audience: 'adults', question: 'Capital of Chile?' })
    expect(outcome.content).toMatchObject({ model: 'oai/mini' })
    expect(provider.last().body.model).toBe('gpt-4o-mini-2024-07-18')
  })

  it('asks for JSON with response_format json_schema and returns the validated value', async () => {
    provider.reply = () => openAiText('{"capital":"Paris","population":2100000}')
    const schema =
      '  outputSchema:\n    type: object\n    required: [capital, population]\n    properties:\n      capital: { type: string }\n      population: { type: integer }\n'
    await putTool('geo', template('oai/mini', schema))
    const outcome = await call('geo', { audience: 'adults', question: 'France?' })
    expect(outcome).toEqual({
      isError: false,
      content: { value: { capital: 'Paris', population: 2100000 }, model: 'oai/mini', usage: { inputTokens: 42, outputTokens: 7 } },
    })
    const { body } = provider.last()
    expect(body.response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'output',
        strict: false,
        schema: {
          type: 'object',
          required: ['capital', 'population'],
          properties: { capital: { type: 'string' }, population: { type: 'integer' } },
        },
      },
    })
    expect(body.messages[0].content).toMatch(
      /Answer with one JSON value that matches this JSON Schema, and nothing else:\n\{"type":"object"/,
    )
  })

  it('turns an answer that breaks outputSchema into a tool error naming the pointer, with the usage spent', async () => {
    provider.reply = () => openAiText('{"capital":"Paris","population":"about two million"}')
    await putTool('geo', template('oai/mini', '  outputSchema:\n    type: object\n    properties:\n      population: { type: integer }\n'))
    const outcome = await call('geo', { audience: 'adults', question: 'France?' })
    expect(outcome.isError).toBe(true)
    expect(outcome.content).toMatchObject({
      message: "The answer of model 'oai/mini' does not match outputSchema: /population: population must be an integer, got string.",
      usage: { inputTokens: 42, outputTokens: 7 },
      answer: { capital: 'Paris', population: 'about two million' },
    })
  })

  it('turns an answer that is not JSON into a tool error, and says when maxTokens cut it off', async () => {
    provider.reply = () => openAiText('{"capital": "Par', undefined, {}, 'length')
    await putTool('geo', template('oai/mini', '  maxTokens: 5\n  outputSchema: { type: object }\n'))
    const outcome = await call('geo', { audience: 'adults', question: 'France?' })
    expect(outcome.isError).toBe(true)
    expect((outcome.content as { message: string }).message).toMatch(
      /^Model 'oai\/mini' did not answer with JSON: the answer is not valid JSON .* The answer was cut off at maxTokens \(5\); raise maxTokens\.$/,
    )
  })

  it('wraps a non-object outputSchema for the provider and unwraps the answer', async () => {
    provider.reply = () => openAiText('{"value":["Lima","Quito"]}')
    await putTool('geo', template('oai/mini', '  outputSchema: { type: array, items: { type: string } }\n'))
    const outcome = await call('geo', { audience: 'adults', question: 'Two capitals?' })
    expect(outcome).toMatchObject({ isError: false, content: { value: ['Lima', 'Quito'] } })
    expect(provider.last().body.response_format.json_schema.schema).toEqual({
      type: 'object',
      properties: { value: { type: 'array', items: { type: 'string' } } },
      required: ['value'],
      additionalProperties: false,
    })
  })

  it('surfaces an HTTP error with its status and the provider message, scrubbed of the API key', async () => {
    await secrets.put(T, 'OPENAI_KEY', 'sk-wrong-key-9931')
    await putTool('geo', template('oai/mini'))
    const outcome = await call('geo', { audience: 'adults', question: 'France?' })
    expect(outcome).toEqual({
      isError: true,
      content: {
        message: "Model 'oai/mini' failed: the model endpoint answered HTTP 401: Incorrect API key provided: [redacted secret:OPENAI_KEY].",
        model: 'oai/mini',
        status: 401,
      },
    })
  })

  it('scrubs the provider message before cutting it to 500 characters, so no prefix of the key survives', async () => {
    await secrets.put(T, 'OPENAI_KEY', OPENAI_KEY)
    await putTool('geo', template('oai/mini'))
    provider.reply = (seen) => ({
      status: 401,
      body: { error: { message: `${'x'.repeat(490)} key ${String(seen.headers.authorization).slice(7)} was refused` } },
    })
    const outcome = (await call('geo', { audience: 'adults', question: 'France?' })) as { isError: boolean; content: { message: string } }
    expect(outcome.isError).toBe(true)
    expect(outcome.content.message).toContain(`${'x'.repeat(490)} key [reda`)
    expect(outcome.content.message).not.toContain(OPENAI_KEY.slice(0, 4))
  })

  it('surfaces a rate limit as a tool error with status 429', async () => {
    provider.reply = () => ({
      status: 429,
      body: { error: { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' } },
    })
    await putTool('geo', template('oai/mini'))
    expect(await call('geo', { audience: 'adults', question: 'France?' })).toMatchObject({
      isError: true,
      content: { message: expect.stringContaining('HTTP 429: Rate limit reached for requests'), status: 429 },
    })
  })

  it('surfaces a refusal as a tool error', async () => {
    provider.reply = () => openAiText(null, undefined, { refusal: "I can't help with that." })
    await putTool('geo', template('oai/mini'))
    expect(await call('geo', { audience: 'adults', question: 'France?' })).toMatchObject({
      isError: true,
      content: {
        message: "Model 'oai/mini' failed: the model refused: I can't help with that.",
        usage: { inputTokens: 42, outputTokens: 7 },
      },
    })
  })

  it('gives up at timeoutMs and says so as a tool error', async () => {
    provider.reply = (seen) => ({ ...openAiText('late', seen.body.model), delayMs: 2_000 })
    await putTool('geo', template('oai/mini', '  timeoutMs: 300\n'))
    const outcome = await call('geo', { audience: 'adults', question: 'France?' })
    expect(outcome).toEqual({
      isError: true,
      content: { message: "Model 'oai/mini' did not answer within 300 ms.", model: 'oai/mini', timeoutMs: 300 },
    })
  })

  it('turns an answer that is not a chat completion into a tool error', async () => {
    provider.reply = () => ({ body: { object: 'list', data: [] } })
    await putTool('geo', template('oai/mini'))
    expect(await call('geo', { audience: 'adults', question: 'France?' })).toMatchObject({
      isError: true,
      content: { message: expect.stringContaining('is not a chat completion (no choices[0].message)') },
    })
  })
})

// ───────────────────────── Anthropic messages ─────────────────────────

describe('prompt_template over Anthropic messages', () => {
  it('sends x-api-key, anthropic-version and max_tokens, joins the text blocks and counts cached input tokens', async () => {
    await putTool('geo', template('ant/claude-3-5-haiku-20241022', '  temperature: 0\n'))
    const outcome = await call('geo', { audience: 'students', question: 'Capital of France?' })
    expect(outcome).toEqual({
      isError: false,
      content: { text: 'Paris.', model: 'ant/claude-3-5-haiku-20241022', usage: { inputTokens: 42, outputTokens: 5 } },
    })
    const { path, headers, body } = provider.last()
    expect(path).toBe('/v1/messages')
    expect([headers['x-api-key'], headers['anthropic-version'], headers.authorization]).toEqual([ANTHROPIC_KEY, '2023-06-01', undefined])
    expect(body).toEqual({
      model: 'claude-3-5-haiku-20241022',
      max_tokens: 1024,
      temperature: 0,
      messages: [
        {
          role: 'user',
          content: 'You are a geography tutor for students.\nAnswer briefly.\n\n<question>\nCapital of France?\n</question>',
        },
      ],
    })
  })

  it('asks for JSON through a forced tool and validates its input', async () => {
    provider.reply = () => anthropicToolUse({ capital: 'Paris', confidence: 0.98 })
    await putTool(
      'geo',
      template(
        'ant/claude-3-5-haiku-20241022',
        '  outputSchema:\n    type: object\n    required: [capital]\n    properties:\n      capital: { type: string }\n      confidence: { type: number }\n',
      ),
    )
    const outcome = await call('geo', { audience: 'adults', question: 'France?' })
    expect(outcome).toEqual({
      isError: false,
      content: {
        value: { capital: 'Paris', confidence: 0.98 },
        model: 'ant/claude-3-5-haiku-20241022',
        usage: { inputTokens: 50, outputTokens: 12 },
      },
    })
    const { body } = provider.last()
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'record_answer' })
    expect(body.tools).toEqual([
      {
        name: 'record_answer',
        description: expect.any(String),
        input_schema: {
          type: 'object',
          required: ['capital'],
          properties: { capital: { type: 'string' }, confidence: { type: 'number' } },
        },
      },
    ])
  })

  it('turns a tool input that breaks outputSchema into a tool error', async () => {
    provider.reply = () => anthropicToolUse({ confidence: 'high' })
    await putTool(
      'geo',
      template(
        'ant/claude-3-5-haiku-20241022',
        '  outputSchema:\n    type: object\n    required: [capital]\n    properties:\n      confidence: { type: number }\n',
      ),
    )
    const outcome = await call('geo', { audience: 'adults', question: 'France?' })
    expect(outcome.isError).toBe(true)
    expect((outcome.content as { message: string }).message).toBe(
      "The answer of model 'ant/claude-3-5-haiku-20241022' does not match outputSchema: /capital: capital is required; /confidence: confidence must be a number, got string.",
    )
  })

  it('surfaces an overloaded error body as a tool error with the status', async () => {
    provider.reply = () => ({ status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } })
    await putTool('geo', template('ant/claude-3-5-haiku-20241022'))
    expect(await call('geo', { audience: 'adults', question: 'France?' })).toEqual({
      isError: true,
      content: {
        message: "Model 'ant/claude-3-5-haiku-20241022' failed: the model endpoint answered HTTP 529: Overloaded.",
        model: 'ant/claude-3-5-haiku-20241022',
        status: 529,
      },
    })
  })

  it('gives up at timeoutMs and says so as a tool error', async () => {
    provider.reply = () => ({ ...anthropicText('late'), delayMs: 2_000 })
    await putTool('geo', template('ant/claude-3-5-haiku-20241022', '  timeoutMs: 250\n'))
    expect(await call('geo', { audience: 'adults', question: 'France?' })).toMatchObject({
      isError: true,
      content: { message: "Model 'ant/claude-3-5-haiku-20241022' did not answer within 250 ms." },
    })
  })
})

// ───────────────────────── configuration and catalog ─────────────────────────

describe('prompt_template configuration', () => {
  it('derives the input schema from the declared inputs', async () => {
    await putTool('geo', template('oai/mini'))
    const tool = await deps.tools.lookup(T, P, 'geo')
    expect(tool?.inputSchema).toEqual({
      type: 'object',
      properties: { audience: { type: 'string' }, question: { type: 'string' }, context: { type: 'object' } },
      required: ['audience', 'question'],
      additionalProperties: false,
    })
    expect(tool?.labels).toEqual(['llm'])
    expect(await call('geo', { audience: 'adults' })).toMatchObject({
      isError: true,
      content: { message: expect.stringContaining('question is required') },
    })
  })

  it('rejects on write a placeholder without an input, modelSize beside a full model name and an unusable outputSchema, each with its line', async () => {
    const body = `type: prompt_template
description: Broken.
parameters:
  promptPrefix: "Hello {{nobody}}"
  model: oai/mini
  modelSize: small
  inputs: []
  outputSchema: { type: object, properties: { a: { type: nope } } }
`
    const error = await failure(() => putTool('broken', body))
    expect(isServerToolsError(error, 'INVALID_CONFIG')).toBe(true)
    const issues = error.details.errors.map((i: { line: number; message: string }) => [i.line, i.message.replace(/ \(line \d+\)$/, '')])
    expect(issues).toEqual([
      [4, 'placeholder {{nobody}} names no declared input'],
      [6, "modelSize picks a model of an instance; model 'oai/mini' already names one (write model: oai to pick by size)"],
      [8, expect.stringMatching(/^outputSchema is not a usable JSON Schema/)],
    ])
  })

  it('answers a tool error when the model instance is not in the catalog or its secret is missing', async () => {
    await putTool('nowhere', template('ghost/model-x'))
    expect(await call('nowhere', { audience: 'a', question: 'q' })).toMatchObject({
      isError: true,
      content: {
        message:
          "Tool 'nowhere' cannot call its model: model instance 'ghost' is not in the model catalog: there is no models/ghost/_provider.yaml in any layer.",
      },
    })
    await secrets.delete(T, 'OPENAI_KEY')
    await putTool('geo', template('oai/mini'))
    expect(await call('geo', { audience: 'a', question: 'q' })).toMatchObject({
      isError: true,
      content: { message: "Tool 'geo' cannot call model 'oai/mini': the secret 'OPENAI_KEY' is not set for this tenant." },
    })
  })

  it('refuses a literal API key in a provider document on write, and at call time in one stored before validation', async () => {
    const error = await failure(() =>
      putDoc('models/leaky/_provider.yaml', `wireType: openai\nbaseUrl: ${provider.url}/v1\napiKey: sk-live-abc\n`),
    )
    expect(isServerToolsError(error, 'INVALID_CONFIG')).toBe(true)
    expect(error.details.errors).toEqual([expect.objectContaining({ line: 3, pointer: '/apiKey' })])
    expect(JSON.stringify(error.details)).not.toContain('sk-live-abc')
    await deps.store.put({
      key: { scope: `${T}#_tenant`, path: 'models/leaky/_provider.yaml' },
      body: `wireType: openai\nbaseUrl: ${provider.url}/v1\napiKey: sk-live-abc\n`,
      actor: 'tester',
    })
    await putTool('leaky', template('leaky/m'))
    expect(await call('leaky', { audience: 'a', question: 'q' })).toMatchObject({
      isError: true,
      content: {
        message: expect.stringContaining('apiKey must be a secret reference such as ${secret:OPENAI_KEY}, never the key itself'),
      },
    })
  })

  it('uses the public endpoint of the wire type when the provider document has no baseUrl, and needs a wireType to call at all', async () => {
    await putDoc('models/surface-only/_provider.yaml', 'maxTools: 20\n')
    await putTool('surface', template('surface-only/m'))
    expect(await call('surface', { audience: 'a', question: 'q' })).toMatchObject({
      isError: true,
      content: {
        message: expect.stringContaining(
          'models/surface-only/_provider.yaml (tenant layer) has no wireType; prompt tools speak openai and anthropic',
        ),
      },
    })
    // resolved, not called: the public endpoint is never contacted from a test
    const catalog = new ModelCatalog()
    const documents = {
      read: async (path: string) =>
        path === 'models/openai/_provider.yaml'
          ? { path, body: 'wireType: openai\nmaxTools: 128\n', version: 0, source: 'bundled' as const }
          : undefined,
    }
    const resolved = await catalog.resolve({ tenant: T, project: P, documents }, 'openai/gpt-4o-mini')
    expect(resolved).toMatchObject({
      ok: true,
      model: { ref: 'openai/gpt-4o-mini', modelId: 'gpt-4o-mini', provider: { wireType: 'openai', baseUrl: 'https://api.openai.com/v1' } },
    })
  })

  it('lets a project override the tenant model catalog', async () => {
    await putDoc('models/oai/mini.yaml', 'modelId: gpt-4o-mini-project-pin\n', P)
    await putTool('geo', template('oai/mini'))
    await call('geo', { audience: 'a', question: 'q' })
    expect(provider.last().body.model).toBe('gpt-4o-mini-project-pin')
  })

  it('goes through the egress guard: a loopback endpoint that is not allow-listed is refused before connecting', async () => {
    deps = createMemoryDeps({ bundledFiles: [], secrets })
    await catalog()
    await putTool('geo', template('oai/mini'))
    const before = provider.seen.length
    const outcome = await call('geo', { audience: 'a', question: 'q' })
    expect(outcome).toMatchObject({
      isError: true,
      content: { message: expect.stringContaining('outbound calls to a loopback address are not allowed'), reason: 'denied' },
    })
    expect(provider.seen.length).toBe(before)
  })
})
