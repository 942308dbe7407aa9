// The dsh-profile-jsonl protocol, generation 1, as the open-design profile speaks it.
// Pure functions only (no Harness import), so plain Node can load and test this module.

import { readFileSync } from 'node:fs'

export const RUNTIME = 'open-design'
export const PROTOCOL_VERSION = 1
// The composition generation a host keys resume on (seed 001 §7): bumped whenever this
// bundle's patch or plugin changes what a run does, so no session crosses such a change.
export const COMPATIBILITY_GENERATION = 'od-dsh.1'
export const CAPABILITIES = Object.freeze({
  session_resume: true,
  session_cancel: true,
  structured_events: true,
})

const ABSOLUTE_CWD = /^(?:\/|[A-Za-z]:[\\/]|\\\\)/
const MODES = ['--probe', '--stdio', '--models']

/** This package's version, read from its own package.json. */
export function pluginVersion() {
  const manifest = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'))
  return String(manifest.version)
}

/** The `probe` or `ready` frame: identity, protocol and composition generations, capabilities. */
export function identityFrame(type, version) {
  return {
    v: 1,
    type,
    runtime: RUNTIME,
    protocol_version: PROTOCOL_VERSION,
    plugin_version: version,
    compatibility_generation: COMPATIBILITY_GENERATION,
    capabilities: { ...CAPABILITIES },
  }
}

/** Backwards-compatible name of the probe builder. */
export function probeFrame(version) {
  return identityFrame('probe', version)
}

export const USAGE = `Usage: dsh --profile open-design (--probe | --stdio | --models)

The Open Design host adapter, protocol generation 1.

Options:
  --probe    print one probe frame (identity and capabilities) and exit
  --stdio    run one request of the newline-delimited JSON protocol on stdin/stdout
  --models   print the model catalog as one models frame and exit
  -h, --help show this help
`

/**
 * The profile's app arguments -> `{mode}` (`probe`, `stdio`, `models`, `help`) or `{error}`.
 * Exactly one mode; anything else is refused with a message naming the argument.
 */
export function parseArgs(args) {
  const modes = []
  for (const arg of args) {
    if (arg === '-h' || arg === '--help') return { mode: 'help' }
    if (MODES.includes(arg)) {
      if (!modes.includes(arg)) modes.push(arg)
      continue
    }
    if (arg.startsWith('-')) return { error: `error: unknown option '${arg}'` }
    return { error: `error: unexpected argument '${arg}'; the task arrives in an execute frame` }
  }
  if (modes.length === 0) return { error: 'error: one of --probe, --stdio or --models is required' }
  if (modes.length > 1) return { error: `error: ${modes.join(' and ')} cannot be combined` }
  return { mode: modes[0].slice(2) }
}

function nonEmptyString(value) {
  return typeof value === 'string' && value !== ''
}

/**
 * Why `frame` is not a generation-1 host command, naming the field and never its value;
 * `undefined` when it is one.
 */
export function commandProblem(frame) {
  if (frame === null || typeof frame !== 'object' || Array.isArray(frame)) {
    return 'a command must be a JSON object'
  }
  if (frame.v !== 1) return 'v must equal 1'
  if (frame.type !== 'execute' && frame.type !== 'cancel') return 'type must be execute or cancel'
  if (!nonEmptyString(frame.request_id)) return 'request_id must be a non-empty string'
  if (frame.type === 'cancel') return undefined
  if (typeof frame.cwd !== 'string' || !ABSOLUTE_CWD.test(frame.cwd)) {
    return 'cwd must be an absolute path'
  }
  if (typeof frame.prompt !== 'string') return 'prompt must be a string'
  for (const key of ['resume_session_id', 'reasoning_effort']) {
    if (key in frame && !nonEmptyString(frame[key])) return `${key} must be a non-empty string`
  }
  const servers = frame.mcp_servers
  if (!Array.isArray(servers) || !servers.every(s => s !== null && typeof s === 'object' && !Array.isArray(s))) {
    return 'mcp_servers must be an array of objects'
  }
  if ('model' in frame) {
    const model = frame.model
    if (model === null || typeof model !== 'object' || !nonEmptyString(model.provider) || !nonEmptyString(model.id)) {
      return 'model must be {provider, id}'
    }
  }
  return undefined
}

/** One JSON line (no newline); a bare JSON text per frame. */
export function encode(frame) {
  return JSON.stringify(frame)
}

/** The text of a tool result's model-facing content blocks. */
export function resultText(blocks) {
  if (typeof blocks === 'string') return blocks
  if (!Array.isArray(blocks)) return ''
  return blocks
    .filter(block => block !== null && typeof block === 'object' && block.type === 'text' && typeof block.text === 'string')
    .map(block => block.text)
    .join('')
}

/** The usage a durable assistant event reports: its own, else its stream's last usage chunk. */
export function eventUsage(data) {
  if (data === null || typeof data !== 'object') return undefined
  if (data.usage !== undefined) return data.usage
  const stream = Array.isArray(data.stream) ? data.stream : []
  for (let i = stream.length - 1; i >= 0; i -= 1) {
    const record = stream[i]
    if (record?.type === 'chunk' && record.chunk?.type === 'usage') return record.chunk.usage
  }
  return undefined
}

/** Add one usage sample to a running total (missing optional buckets stay missing). */
export function addUsage(total, next) {
  if (next === undefined || next === null) return total
  const count = value => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0)
  const sum = total ?? { input_tokens: 0, output_tokens: 0 }
  const out = {
    input_tokens: sum.input_tokens + count(next.inputTokens),
    output_tokens: sum.output_tokens + count(next.outputTokens),
  }
  for (const [key, wire] of [['cacheReadTokens', 'cache_read_tokens'], ['cacheWriteTokens', 'cache_write_tokens']]) {
    if (sum[wire] !== undefined || next[key] !== undefined) out[wire] = count(sum[wire]) + count(next[key])
  }
  return out
}

/** How a turn's end maps onto a result frame: `{status, stop_reason, error?}`. */
export function turnOutcome(reason, cancelled) {
  if (cancelled || reason?.kind === 'aborted' || reason?.kind === 'interrupted') {
    return { status: 'cancelled', stop_reason: 'cancelled' }
  }
  switch (reason?.kind) {
    case 'completed':
      return { status: 'completed', stop_reason: 'end_turn' }
    case 'max-tokens':
      return { status: 'completed', stop_reason: 'max_tokens' }
    case 'error': {
      const error = reason.error ?? {}
      return {
        status: 'failed',
        stop_reason: 'error',
        error: {
          code: nonEmptyString(error.code) ? error.code : 'RUN_FAILED',
          message: nonEmptyString(error.message) ? error.message : 'The run failed.',
        },
      }
    }
    case 'blocked':
      return {
        status: 'failed',
        stop_reason: 'blocked',
        error: { code: 'TURN_BLOCKED', message: 'A policy blocked the turn before it ran.' },
      }
    default:
      return {
        status: 'failed',
        stop_reason: 'error',
        error: { code: 'NO_TERMINAL_TURN', message: 'The run ended without a terminal turn.' },
      }
  }
}

/**
 * Why a persisted Session cannot be resumed by this profile (undefined when it can): it must
 * be a top-level Session recorded in the same working directory, outside any agent preset.
 */
export function adoptionProblem(header, events, cwd) {
  if (header === null || typeof header !== 'object') return 'the session has no readable header'
  let preset = header.agentPreset
  for (const event of events ?? []) {
    if (event?.type === 'agent-preset/selected') preset = event.data?.agentPreset
  }
  if (preset !== undefined) return 'the session runs under an agent preset this profile does not compose'
  if (header.origin === 'subagent' || header.parentSession !== undefined) {
    return 'the session is a subagent or forked session'
  }
  if (header.cwd === undefined) return 'the session recorded no working directory'
  if (header.cwd !== cwd) return 'the session was recorded in another working directory'
  return undefined
}
