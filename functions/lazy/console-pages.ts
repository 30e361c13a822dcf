/** The console's server-rendered pages (functions/http/console/pages.tsx), on the first page view; its import of ./shared is explained there. */
import './shared'

export * from '../http/console/pages'
