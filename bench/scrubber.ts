/**
 * bench/scrubber — what scrubbing a tool result costs, and that it stays linear in the result's
 * size whatever the number of secrets (issue 11, F8). Measured side by side in one run:
 *
 *   scrub          SecretScrubber.scrubText of a 1 MiB JSON-ish text holding a few echoes, with
 *                  1, 10 and 50 secrets (each ~20 spellings: cases, encodings, base64 alignments);
 *                  every sixth word is percent-encoded, so there are layers to decode
 *      vs floor    one pass over the same text that cannot be avoided: `text.toLowerCase()`
 *      vs one-layer the same scrubber on the same text with its escapes written out (`/path?q=1`):
 *                  one search and no layer, what scrubbing cost before layers were decoded
 *   json-in-json   the typical text as a JSON string (a `\"` every few characters): the dense case
 *   regex          the former approach for reference: one case-insensitive alternation of the
 *                  same spellings (`text.replace(/a|b|…/gi)`), which retries every spelling at
 *                  every position
 *   hostile        the same with a text an attacker can shape (a server's answer): the first
 *                  half of each secret over and over, so every position is a partial match
 *
 * Samples alternate (ABAB…), each is CPU time (`process.cpuUsage`, user + system), and the
 * statistic is the median. No network. Run with
 * `npm run bench -- scrubber` or `npx tsx bench/scrubber.ts`.
 */
import { randomBytes } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import { reflectedForms, SecretScrubber } from '../lib/secrets/scrubber'

const TEXT_BYTES = 1024 * 1024
const SECRET_COUNTS = [1, 10, 50]

/** Partial matches everywhere: what a backtracking alternation pays for at every position. */
function hostileCorpus(secrets: string[]): string {
  const halves = secrets.map((v) => v.slice(0, v.length >> 1)).join(' ')
  return halves.repeat(Math.ceil(TEXT_BYTES / (halves.length + 1))).slice(0, TEXT_BYTES)
}

function corpus(secrets: string[]): string {
  const words = [
    '"id": 12345',
    '"name": "Ada Lovelace"',
    '"tags": ["x", "y"]',
    '"note": "nothing secret here"',
    'Bearer eyJhbGciOi',
    '%2Fpath%3Fq%3D1',
  ]
  let out = ''
  for (let i = 0; out.length < TEXT_BYTES; i++) {
    out += `${words[i % words.length]}, `
    // a handful of echoes, spread out
    if (i % 5000 === 0)
      out += ` echo:${Buffer.from(`user:${secrets[i % secrets.length]}`).toString('base64')} ${secrets[(i + 1) % secrets.length].toUpperCase()} `
  }
  return out
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

function measure(runs: Record<string, () => unknown>, samples: number): Record<string, number> {
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(runs).map((k) => [k, []]))
  for (let i = 0; i < samples; i++) {
    for (const [name, run] of Object.entries(runs)) {
      // CPU time of this thread's process: on a shared machine, wall time mostly measures the neighbours
      const t0 = process.cpuUsage()
      run()
      const used = process.cpuUsage(t0)
      times[name].push((used.user + used.system) / 1000)
    }
  }
  return Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]))
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

export async function benchScrubber(opts: { samples?: number; log?: (line: string) => void } = {}) {
  const log = opts.log ?? ((line: string) => process.stdout.write(`${line}\n`))
  const samples = opts.samples ?? 15
  const summary: string[] = []
  log(`scrubber: ${TEXT_BYTES} characters per result, median CPU ms of ${samples} alternating samples`)
  log('text          secrets  spellings  floor ms  1-layer ms  scrub ms  regex ms  scrub/floor  scrub/1-layer  regex/scrub  redactions')
  const kinds = [
    ...SECRET_COUNTS.map((n) => ['typical', n] as const),
    ['json-in-json', 10] as const,
    ['hostile', 1] as const,
    ['hostile', 50] as const,
  ]
  for (const [kind, count] of kinds) {
    const secrets = Array.from({ length: count }, () => randomBytes(18).toString('base64url'))
    const raw = kind === 'hostile' ? hostileCorpus(secrets) : kind === 'json-in-json' ? JSON.stringify(corpus(secrets)) : corpus(secrets)
    // flat, as a decoded response body is (a string built with += is a rope)
    const text = Buffer.from(raw, 'utf8').toString('utf8')
    const unescaped = Buffer.from(raw.replaceAll('%2Fpath%3Fq%3D1', '/path?q=1').replaceAll('\\"', "'"), 'utf8').toString('utf8')
    const scrubber = new SecretScrubber(new Map(secrets.map((v, i) => [`S${i}`, v])))
    const spellings = [...new Set(secrets.flatMap((v) => [...reflectedForms(v)]))].sort((a, b) => b.length - a.length)
    const regex = new RegExp(spellings.map(escapeRegExp).join('|'), 'gi')
    scrubber.scrubText('warm-up')
    const redactions = scrubber.scrubText(text).split('[redacted secret:').length - 1
    const t = measure(
      {
        floor: () => text.toLowerCase(),
        oneLayer: () => scrubber.scrubText(unescaped),
        scrub: () => scrubber.scrubText(text),
        regex: () => text.replace(regex, '[redacted]'),
      },
      samples,
    )
    const line = `${kind.padEnd(12)}  ${String(count).padStart(7)}  ${String(spellings.length).padStart(9)}  ${t.floor.toFixed(2).padStart(8)}  ${t.oneLayer.toFixed(2).padStart(10)}  ${t.scrub.toFixed(2).padStart(8)}  ${t.regex.toFixed(2).padStart(8)}  ${(t.scrub / t.floor).toFixed(1).padStart(10)}×  ${(t.scrub / t.oneLayer).toFixed(2).padStart(12)}×  ${(t.regex / t.scrub).toFixed(1).padStart(10)}×  ${String(redactions).padStart(10)}`
    log(line)
    summary.push(
      `scrubber, ${kind} text, ${count} secrets (${spellings.length} spellings), 1 MiB: ${(t.scrub / t.floor).toFixed(1)}× toLowerCase, ${(t.scrub / t.oneLayer).toFixed(2)}× the same text without escapes (one search, no layer); the regex alternation takes ${(t.regex / t.scrub).toFixed(1)}× the scrubber`,
    )
  }
  return { summary }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await benchScrubber()
