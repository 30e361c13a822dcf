/** The discovery meta-tools over what a tenant can write (issue 21, third pass: D1 tool_list, D2 tool_description), against `npm start`. */
import { rowSet } from './rows/discovery'
import { hostileSuite } from './suite'

hostileSuite(rowSet)
