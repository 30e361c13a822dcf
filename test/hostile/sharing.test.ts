/** OpenAPI documents whose cost is in what they share (issue 21 N2, N3), against `npm start`, measured by the hostile harness. */
import { rowSet } from './rows/sharing'
import { hostileSuite } from './suite'

hostileSuite(rowSet)
