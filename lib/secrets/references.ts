/**
 * `${secret:NAME}` references in tool configurations: finding them, loading their values for
 * one call, substituting them, and scrubbing every value used from whatever the call returns.
 */
import type { SecretStore } from './ports'

/** A reference; NAME follows SECRET_NAME_PATTERN. */
export const SECRET_REFERENCE = /\$\{secret:([A-Za-z][A-Za-z0-9_-]{0,127})\}/g
/** Anything that looks like an attempt at a reference, valid or not (for config checks). */
const SECRET_REFERENCE_LIKE = /\$\{secret:([^}]*)\}?/g

/** Every referenced name in a string or any JSON value (strings, keys excluded), in first-seen order. */
export function secretNamesIn(value: unknown, into: Set<string> = new Set()): Set<string> {
  if (typeof value === 'string') {
    for (const m of value.matchAll(SECRET_REFERENCE)) into.add(m[1])
  } else if (Array.isArray(value)) {
    for (const v of value) secretNamesIn(v, into)
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) secretNamesIn(v, into)
  }
  return into
}

/** Malformed references (`${secret:}`, `${secret:1x}`, an unclosed one) with their JSON pointer. */
export function malformedSecretReferences(value: unknown, pointer = ''): { pointer: string; message: string }[] {
  const out: { pointer: string; message: string }[] = []
  if (typeof value === 'string') {
    for (const m of value.matchAll(SECRET_REFERENCE_LIKE)) {
      if (!/^\$\{secret:[A-Za-z][A-Za-z0-9_-]{0,127}\}$/.test(m[0])) {
        out.push({ pointer, message: `'${m[0].slice(0, 60)}' is not a valid secret reference; write \${secret:NAME} with NAME made of letters, digits, '_' and '-'` })
      }
    }
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => out.push(...malformedSecretReferences(v, `${pointer}/${i}`)))
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) out.push(...malformedSecretReferences(v, `${pointer}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`))
  }
  return out
}

export type SecretValues = ReadonlyMap<string, string>

/** Loads the named secrets of a tenant in one store call; reports the names that are not set. */
export async function loadSecrets(store: SecretStore, tenant: string, names: Iterable<string>): Promise<{ values: Map<string, string>; missing: string[] }> {
  const wanted = [...new Set(names)]
  if (!wanted.length) return { values: new Map(), missing: [] }
  const values = await store.getMany(tenant, wanted)
  return { values, missing: wanted.filter((n) => !values.has(n)) }
}

/** Replaces every reference in a string; `encode` transforms each value (e.g. for a URL). */
export function substituteSecrets(text: string, values: SecretValues, encode: (v: string) => string = (v) => v): string {
  return text.replace(SECRET_REFERENCE, (whole, name: string) => {
    const v = values.get(name)
    return v === undefined ? whole : encode(v)
  })
}

/**
 * Removes secret values from results and error messages. Besides the raw value it removes the
 * forms a server or a library is likely to echo: JSON-escaped, URL-encoded (both flavours) and
 * base64/base64url. Derived values (e.g. the base64 of `user:password` for Basic auth) are added
 * with `addDerived`. Longest forms are replaced first.
 */
export class SecretScrubber {
  private forms: { text: string; name: string }[] = []
  private sorted = true
  private names = new Map<string, string>()
  private pattern?: RegExp

  constructor(values: SecretValues = new Map()) {
    for (const [name, value] of values) this.add(name, value)
  }

  get isEmpty() {
    return this.forms.length === 0
  }

  add(name: string, value: string) {
    if (!value) return
    const variants = new Set<string>([
      value,
      JSON.stringify(value).slice(1, -1),
      encodeURIComponent(value),
      new URLSearchParams({ v: value }).toString().slice(2),
      Buffer.from(value, 'utf8').toString('base64'),
      Buffer.from(value, 'utf8').toString('base64').replace(/=+$/, ''),
      Buffer.from(value, 'utf8').toString('base64url'),
    ])
    for (const text of variants) if (text) this.forms.push({ text, name })
    this.sorted = false
  }

  /** A value computed from a secret (a Basic credential, a signature) that must not leak either. */
  addDerived(name: string, derived: string) {
    if (derived) {
      this.forms.push({ text: derived, name })
      this.sorted = false
    }
  }

  scrubText(text: string): string {
    if (!this.forms.length || !text) return text
    if (!this.sorted) {
      // one pass over an alternation, longest first, so a replacement is never re-scrubbed
      this.forms.sort((a, b) => b.text.length - a.text.length)
      this.names = new Map(this.forms.map((f) => [f.text, f.name]))
      this.pattern = new RegExp([...this.names.keys()].map(escapeRegExp).join('|'), 'g')
      this.sorted = true
    }
    return text.replace(this.pattern!, (m) => `[redacted secret:${this.names.get(m)}]`)
  }

  /** Deep copy with every string (and object key) scrubbed. */
  scrub<T>(value: T): T {
    if (!this.forms.length) return value
    return this.walk(value, 0) as T
  }

  private walk(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.scrubText(value)
    if (depth > 200 || value === null || typeof value !== 'object') return value
    if (Buffer.isBuffer(value)) return Buffer.from(this.scrubText(value.toString('utf8')), 'utf8')
    if (Array.isArray(value)) return value.map((v) => this.walk(v, depth + 1))
    if (value instanceof Error) {
      const copy = new Error(this.scrubText(value.message))
      copy.name = value.name
      return copy
    }
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[this.scrubText(k)] = this.walk(v, depth + 1)
    return out
  }
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
