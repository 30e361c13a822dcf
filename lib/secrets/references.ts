/**
 * `${secret:NAME}` references in tool configurations: finding them, loading their values for
 * one call, and substituting them (scrubber.ts removes them from what the call returns).
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
        out.push({
          pointer,
          message: `'${m[0].slice(0, 60)}' is not a valid secret reference; write \${secret:NAME} with NAME made of letters, digits, '_' and '-'`,
        })
      }
    }
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => out.push(...malformedSecretReferences(v, `${pointer}/${i}`)))
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value))
      out.push(...malformedSecretReferences(v, `${pointer}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`))
  }
  return out
}

export type SecretValues = ReadonlyMap<string, string>

/** Loads the named secrets of a tenant in one store call; reports the names that are not set. */
export async function loadSecrets(
  store: SecretStore,
  tenant: string,
  names: Iterable<string>,
): Promise<{ values: Map<string, string>; missing: string[] }> {
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
 * The secrets a URL template would place before its path: in the scheme, user info, host or
 * port. They are refused there — a host is sent to DNS, lower-cased and IDNA-mapped by URL
 * parsing (so scrubbing could miss it) and named in the service's own messages. The authority is
 * read as WHATWG URL parsing reads it for http(s): after `scheme:` and any slashes or
 * backslashes, up to the first `/`, `\`, `?` or `#`; without a recognisable scheme, everything
 * up to the first of those counts (the scheme itself may be a secret then).
 */
export function secretsBeforeUrlPath(template: string): string[] {
  const text = template.replace(/[\t\n\r]/g, '').replace(/^[\x00-\x20]+/, '')
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:[/\\]*/.exec(text)
  const rest = scheme ? text.slice(scheme[0].length) : text
  const end = rest.search(/[/\\?#]/)
  return [...secretNamesIn(end < 0 ? rest : rest.slice(0, end))]
}

/** The write-time and call-time message for secretsBeforeUrlPath. */
export const secretInUrlHostMessage = (names: string[]) =>
  `a secret cannot be part of the URL's scheme, host or port (${names.map((n) => `\${secret:${n}}`).join(', ')}): name resolution and URL parsing would expose it; put it in the path, the query or a header`
