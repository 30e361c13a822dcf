/**
 * Imported for its effect on the bundle only, by every module the API loads with a dynamic
 * import: this folder (the HTTP layer's lazy modules too: the composition hands their loaders to
 * it as AppDeps.modules) and functions/surface-deps.ts. With `splitting`, esbuild puts a module
 * shared by the handler's entry and some lazy modules into one chunk per *combination* of
 * importers; a chunk the entry imports statically is one more module to load at every cold start.
 * When every lazy module also imports the whole composition, all those combinations are the same
 * one, and the shared code is one chunk: 20 → 11 files the entry loads (docs/operations/cold-start-and-latency.md).
 * Nothing here runs code that the handler did not already run: both modules are loaded at start.
 */
import '../deps'
import '../http/app'
import '../observability'
