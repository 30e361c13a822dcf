/**
 * Conditional requests (RFC 9110 §13) on versioned documents. The edge parses `If-Match` and
 * `If-None-Match` into the versions their entity-tags can name; this module evaluates them in the
 * RFC's order (If-Match first, then If-None-Match) and turns what is left into one atomic store
 * condition, so a precondition is never checked apart from the write it guards.
 *
 * A document's ETag is `"<version>"`. A well-formed tag that names no version (`"stale-0"`, a
 * 16-digit number, a weak tag under If-Match's strong comparison) simply never matches: 412.
 */
import { conflict, notFound } from '../errors'
import type { DeleteOptions, DocumentKey, DocumentStore, PutOptions } from './ports'

export interface Preconditions {
  /** `*`, or the versions the listed tags name (strong comparison; may be empty: nothing matches). */
  ifMatch?: '*' | readonly number[]
  /** `*`, or the versions the listed tags name (weak comparison; empty: nothing matches, so it passes). */
  ifNoneMatch?: '*' | readonly number[]
}

const failed = (path: string, why: string) => conflict(`precondition failed for ${path}: ${why}`)
const listed = (versions: readonly number[]) => versions.map((v) => `"${v}"`).join(', ')

/**
 * The store condition for a write under `pre`, or PRECONDITION failure (CONFLICT) when it is
 * decided before writing. `currentVersion` (the live version, or undefined) is read only when a
 * list of tags must be compared with it; the write then pins that version, so a change in between
 * fails the write instead of slipping past the check.
 */
export async function writeConditions(
  path: string,
  pre: Preconditions,
  currentVersion: () => Promise<number | undefined>,
): Promise<PutOptions> {
  let opts: PutOptions = {}
  const { ifMatch, ifNoneMatch } = pre
  if (ifMatch === '*') opts = { mustExist: true }
  else if (ifMatch?.length === 0) throw failed(path, 'If-Match names no version of this document')
  else if (ifMatch?.length === 1) opts = { expectedVersion: ifMatch[0] }
  else if (ifMatch) {
    const v = await currentVersion()
    if (v === undefined) throw failed(path, 'If-Match needs the document to exist, and it does not')
    if (!ifMatch.includes(v)) throw failed(path, `the document is at version ${v}, not one of ${listed(ifMatch)}`)
    opts = { expectedVersion: v }
  }

  if (ifNoneMatch === '*') {
    // If-Match has already required a live document, which If-None-Match: * refuses.
    if (ifMatch !== undefined) throw failed(path, 'If-None-Match: * needs the document to be absent, and If-Match needs it to exist')
    return { createOnly: true }
  }
  if (!ifNoneMatch?.length) return opts
  if (opts.expectedVersion !== undefined) {
    if (ifNoneMatch.includes(opts.expectedVersion))
      throw failed(path, `If-None-Match excludes version ${opts.expectedVersion}, which If-Match requires`)
    return opts
  }
  const v = await currentVersion()
  if (v !== undefined && ifNoneMatch.includes(v)) throw failed(path, `the document is at version ${v}, which If-None-Match excludes`)
  if (v === undefined) {
    if (opts.mustExist) throw failed(path, 'If-Match needs the document to exist, and it does not')
    return { createOnly: true }
  }
  return { expectedVersion: v }
}

/**
 * The store condition for a delete under `pre`. A missing document is NOT_FOUND whatever the
 * preconditions (RFC 9110 §13.2.1: they are ignored when the answer would not be 2xx anyway).
 */
export async function deleteConditions(
  path: string,
  pre: Preconditions,
  currentVersion: () => Promise<number | undefined>,
): Promise<DeleteOptions> {
  let current: number | undefined | null = null
  const read = async () => (current === null ? (current = await currentVersion()) : current)
  const opts = await writeConditions(path, pre, read).catch(async (e) => {
    if ((await read()) === undefined) throw notFound(`${path} does not exist`)
    throw e
  })
  if (opts.createOnly) {
    if ((await read()) === undefined) throw notFound(`${path} does not exist`)
    throw failed(path, 'If-None-Match: * needs the document to be absent')
  }
  return opts.expectedVersion === undefined ? {} : { expectedVersion: opts.expectedVersion }
}

/** The live version of one document, read only when a precondition needs it. */
export const liveVersion = (store: DocumentStore, key: DocumentKey) => async () => (await store.get(key))?.version
