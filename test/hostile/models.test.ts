/** Model chains and learned tool limits (issue 21 N5, N6), against `npm start`, measured by the hostile harness. */
import { rowSet } from './rows/models'
import { hostileSuite } from './suite'

hostileSuite(rowSet)
