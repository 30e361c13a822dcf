/** The OpenAPI document (functions/http/openapi.ts), built on the first GET /openapi.json; its import of ./shared is explained there. */
import './shared'

export * from '../http/openapi'
