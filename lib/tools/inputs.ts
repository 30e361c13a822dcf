/**
 * Declared inputs (`inputs: [{ name, type, description?, required? }]`), shared by the scripted,
 * rest and prompt_template types: the JSON Schema that validates the declaration, and the
 * LLM-visible input schema generated from it.
 */
import type { JsonSchema } from '../config/json-schema'
import { ownPattern } from '../config/patterns'

export type InputType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array'

export interface InputDeclaration {
  name: string
  type: InputType
  description?: string
  required?: boolean // default true
}

export const INPUT_TYPES: InputType[] = ['string', 'number', 'integer', 'boolean', 'object', 'array']

/** Schema of the `inputs` array. Duplicate names and reserved names are checked by checkInputs. */
export const inputsSchema: JsonSchema = {
  type: 'array',
  description: 'the arguments the tool takes; the input schema the model sees is generated from them',
  items: {
    type: 'object',
    required: ['name', 'type'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', pattern: ownPattern('^[A-Za-z_$][A-Za-z0-9_$]*$'), maxLength: 64, description: 'unique among the inputs' },
      type: { enum: INPUT_TYPES, description: "the argument's JSON type" },
      description: { type: 'string', description: 'what the model reads about the argument' },
      required: { type: 'boolean', description: 'default true' },
    },
  },
}

/** Rules JSON Schema can't say: unique names, reserved names. Returns [pointer, message] pairs. */
export function checkInputs(inputs: InputDeclaration[], pointer: string, reserved: string[] = []): { pointer: string; message: string }[] {
  const problems: { pointer: string; message: string }[] = []
  const seen = new Set<string>()
  inputs.forEach((input, i) => {
    if (reserved.includes(input.name)) problems.push({ pointer: `${pointer}/${i}/name`, message: `input name '${input.name}' is reserved` })
    if (seen.has(input.name)) problems.push({ pointer: `${pointer}/${i}/name`, message: `input name '${input.name}' is declared twice` })
    seen.add(input.name)
  })
  return problems
}

export function schemaFromInputs(inputs: InputDeclaration[]): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  const required: string[] = []
  for (const input of inputs) {
    properties[input.name] = input.description ? { type: input.type, description: input.description } : { type: input.type }
    if (input.required !== false) required.push(input.name)
  }
  return required.length
    ? { type: 'object', properties, required, additionalProperties: false }
    : { type: 'object', properties, additionalProperties: false }
}
