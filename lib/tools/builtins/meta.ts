/** The meta-tools: registered as built-ins and resolved by the process surface itself. */
import { invokeToolTool } from './invoke_tool'
import { toolDescriptionTool } from './tool_description'
import { toolListTool } from './tool_list'

export const META_BUILTINS = [toolListTool, toolDescriptionTool, invokeToolTool]
