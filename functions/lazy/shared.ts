/**
 * Imported for its effect on the bundle only, by every module the API loads with a dynamic
 * import (this folder, functions/surface-deps.ts, and functions/http/lazy-shared.ts for the HTTP
 * layer's own). With `splitting`, esbuild puts a module shared by the handler's entry and some
 * lazy modules into one chunk per *combination* of importers; a chunk the entry imports statically
 * is one more module to load at every cold start. When every lazy module also imports the whole
 * composition, all those combinations are the same one, and the shared code is one chunk: 20 → 12
 * files the entry loads, measured −6 to −8 ms of a ~125 ms cold start (README "Cold start").
 * Nothing here runs code that the handler did not already run: both modules are loaded at start.
 */
import '../deps'
import '../http/app'
