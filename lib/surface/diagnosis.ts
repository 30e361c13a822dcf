/**
 * Empty-response diagnosis (spec §13.2): when an endpoint answered with nothing, cut the
 * conversation's tokens against the known tool names and the tools array that was offered — a
 * known name in the text that was not offered is a phantom candidate (the endpoint may have
 * silently dropped a call to it). Never for `finishReason: length` (a deterministic wall).
 */

export type PhantomOrigin = 'prompt' | 'user' | 'context'

export interface DiagnosisMessage {
  role: string
  content: unknown
}

export interface Diagnosis {
  kind: 'phantom' | 'blank' | 'skipped'
  phantoms: { name: string; origin: PhantomOrigin }[]
  reason?: string
}

const TOKEN = /[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9]|[A-Za-z0-9]/g

/** The text of a message's content: a string, or the text parts of a content array. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) return content.map((part) => textOf(part)).join('\n')
  if (content && typeof content === 'object') {
    const o = content as Record<string, unknown>
    const parts: string[] = []
    for (const k of ['text', 'content', 'input', 'arguments', 'name']) {
      const v = o[k]
      if (typeof v === 'string') parts.push(v)
      else if (v && typeof v === 'object') parts.push(textOf(v))
    }
    return parts.join('\n')
  }
  return ''
}

const originOf = (role: string): PhantomOrigin =>
  role === 'system' || role === 'developer' ? 'prompt' : role === 'user' ? 'user' : 'context'

export function diagnoseEmptyResponse(input: {
  messages: readonly DiagnosisMessage[]
  offered: ReadonlySet<string>
  known: ReadonlySet<string>
  finishReason?: string
}): Diagnosis {
  if ((input.finishReason ?? '').toLowerCase() === 'length') {
    return {
      kind: 'skipped',
      phantoms: [],
      reason: "finishReason 'length' is a deterministic wall (the output budget ran out), not evidence of a dropped tool call",
    }
  }
  // The latest message naming a candidate decides its origin.
  const origin = new Map<string, PhantomOrigin>()
  for (const m of input.messages) {
    const text = textOf(m.content)
    for (const token of text.match(TOKEN) ?? []) {
      if (input.known.has(token) && !input.offered.has(token)) origin.set(token, originOf(m.role))
    }
  }
  const phantoms = [...origin.entries()].map(([name, o]) => ({ name, origin: o })).sort((a, b) => (a.name < b.name ? -1 : 1))
  return { kind: phantoms.length ? 'phantom' : 'blank', phantoms }
}
