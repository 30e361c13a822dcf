/**
 * Every Hono app of the service routes with a LinearRouter, built for processes that start often
 * (Lambda): adding a route is an array push, and its match code is small. Hono's default (a
 * SmartRouter over RegExpRouter) compiles all routes into one pattern on the first request (~4 ms
 * of a cold start with these ~70 routes); a TrieRouter builds nodes as routes are added. Against
 * the TrieRouter, the LinearRouter measured 3.5 % less import and 2 % less CPU over the whole cold
 * start (bench/coldstart.ts, 60 rounds), and the warm manifest route 0.80–0.85× its plain route
 * instead of 0.85–0.91× — matching walks the routes, a few µs next to a route's work.
 *
 * Its one limit: a pattern may not combine a parameter with a trailing wildcard (it throws when a
 * request reaches such a route), so tail paths are `:path{.+}` and middleware that needs the
 * tenant reads it from the path (./auth.ts). test/http/routes.test.ts checks every pattern.
 */
import type { Env, Schema } from 'hono'
import { HonoBase, type HonoOptions } from 'hono/hono-base'
import { LinearRouter } from 'hono/router/linear-router'

// biome-ignore lint/complexity/noBannedTypes: the same default as Hono's own class, so the two stay interchangeable
export class Hono<E extends Env = Env, S extends Schema = {}, BasePath extends string = '/'> extends HonoBase<E, S, BasePath> {
  constructor(options: HonoOptions<E> = {}) {
    super(options)
    this.router = options.router ?? new LinearRouter()
  }
}
