/**
 * The preview, the console and `server-tools preview` give a declaration's size in tokens without
 * a tokenizer (its vocabulary is megabytes, kept out of the Lambda bundle): estimateTokens counts
 * pre-tokenizer pieces. Held here against gpt-tokenizer's o200k_base on declarations of invented
 * variants — English, German and Japanese descriptions, names that need quoting, deep schemas.
 */
import { countTokens } from 'gpt-tokenizer'
import { describe, expect, it } from 'vitest'
import { success } from '../../../lib/calls/outcome'
import type { JsonSchema } from '../../../lib/config/json-schema'
import { codeDeclaration, estimateTokens } from '../../../lib/tools/code-declaration'
import type { Tool } from '../../../lib/tools/contracts'

const SCHEMAS: JsonSchema[] = [
  {
    type: 'object',
    required: ['query'],
    properties: { query: { type: 'string', description: 'What to search for.' }, limit: { type: 'integer' } },
  },
  { type: 'object', properties: { status: { enum: ['open', 'closed', 'pending'] }, owner: { type: ['string', 'null'] } } },
  {
    type: 'object',
    properties: {
      filter: {
        type: 'object',
        properties: { and: { type: 'array', items: { type: 'object', properties: { field: { type: 'string' }, eq: {} } } } },
      },
    },
  },
]

const tools = (n: number, name: (i: number) => string, description: (i: number) => string): Tool[] =>
  Array.from({ length: n }, (_, i) => ({
    name: name(i),
    description: description(i),
    inputSchema: SCHEMAS[i % SCHEMAS.length],
    labels: [],
    primary: true,
    deferred: false,
    source: 'builtin' as const,
    typeId: 'builtin',
    invoke: async () => success(null),
  }))

const VARIANTS: Record<string, Tool[]> = {
  english: tools(
    60,
    (i) => `svc${i % 6}__op${i}`,
    (i) => `Operation ${i}: reads or changes records. Returns the matching records as JSON.`,
  ),
  german: tools(
    40,
    (i) => `kunde_${i}`,
    (i) => `Vorgang ${i}: liest oder ändert Datensätze für Kundinnen in München.`,
  ),
  japanese: tools(
    30,
    (i) => `search_${i}`,
    (i) => `顧客レコードを検索します (${i} 件目)`,
  ),
  quoted: tools(
    40,
    (i) => `get-customer.record_by_id_v${i}`,
    () => 'x',
  ),
}

describe('estimateTokens', () => {
  it('stays within 25 % of o200k_base on declarations in English, German, Japanese and with quoted names', () => {
    const ratios: Record<string, number> = {}
    for (const [variant, list] of Object.entries(VARIANTS)) {
      const text = codeDeclaration(list).text
      ratios[variant] = Math.round((estimateTokens(text) / countTokens(text)) * 100) / 100
    }
    for (const [variant, ratio] of Object.entries(ratios)) {
      expect(ratio, variant).toBeGreaterThanOrEqual(0.75)
      expect(ratio, variant).toBeLessThanOrEqual(1.25)
    }
  })
})
