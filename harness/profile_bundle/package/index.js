// @open-design/dsh-runtime: the open-design profile's host adapter for DeepSeek Harness.
//
// A Cordis plugin this bundle's patch inserts over dsh-base. It parses the profile's app
// arguments (--probe, --stdio, --models) and, for --stdio, runs one request of the
// dsh-profile-jsonl protocol, generation 1: ready, then one execute answered with session,
// thinking/text/tool_call/tool_result/usage frames and exactly one result. The agent loop,
// tools, provider, credentials and session persistence are the runtime's own services
// (ctx.agents.create / ctx.agents.resume); this plugin never touches session files.

import { randomUUID } from 'node:crypto'
import { realpathSync, statSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { installModelSelection } from '@deepseek-ai/dsh-agent'
import { createUserMessage } from '@deepseek-ai/dsh-llm'
import {
  USAGE,
  addUsage,
  adoptionProblem,
  commandProblem,
  encode,
  eventUsage,
  identityFrame,
  parseArgs,
  pluginVersion,
  probeFrame,
  resultText,
  turnOutcome,
} from './protocol.js'

export { probeFrame }
export const runtime = 'open-design'

/** Stable Cordis plugin name. */
export const name = 'open-design-runtime'

/** The launcher's argument snapshot; core services are read after the loader settles. */
export const inject = ['cmdlineArgs']

/** The process streams; tests may substitute them. */
export const internals = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }

class ProtocolExit extends Error {
  constructor(code) {
    super(`exit ${code}`)
    this.exitCode = code
  }
}

/** Host commands from stdin, one JSON line each, as an async queue. */
function commandQueue(stdin) {
  const items = []
  let wake
  const push = item => {
    items.push(item)
    if (wake !== undefined) {
      const resolve = wake
      wake = undefined
      resolve()
    }
  }
  const lines = createInterface({ input: stdin, crlfDelay: Infinity })
  lines.on('line', line => {
    if (line.trim() === '') return
    try {
      push({ kind: 'frame', frame: JSON.parse(line) })
    } catch {
      push({ kind: 'bad' })
    }
  })
  lines.on('close', () => push({ kind: 'eof' }))
  return {
    async next() {
      while (items.length === 0) await new Promise(resolve => { wake = resolve })
      return items.shift()
    },
    /** Stop reading: dsh exits only once nothing holds its event loop, stdin included. */
    close() {
      lines.close()
      stdin.destroy?.()
    },
  }
}

/** Write frames and bounded diagnostics; stdout carries protocol frames only. */
function channel(io) {
  return {
    frame(value) {
      io.stdout.write(encode(value) + '\n')
    },
    note(text) {
      io.stderr.write(`[open-design] ${text}\n`)
    },
    protocolError(code, message, requestId) {
      const frame = { v: 1, type: 'protocol_error' }
      if (typeof requestId === 'string' && requestId !== '') frame.request_id = requestId
      frame.code = code
      frame.message = message
      this.frame(frame)
      return new ProtocolExit(1)
    },
  }
}

/** The core services a run needs, after the loader has settled the whole composition. */
async function coreServices(ctx) {
  await ctx.get('loader')?.await()
  const services = {
    agents: ctx.get('agents'),
    defaultModel: ctx.get('agentDefaultModel'),
    sessions: ctx.get('sessions'),
    llm: ctx.get('llm'),
  }
  const missing = Object.entries(services).filter(([, v]) => v === undefined).map(([k]) => k)
  return { services, missing }
}

/** `models` frame: every advertised model of every provider route, with reasoning choices. */
async function modelsFrame(llm) {
  const models = []
  for (const provider of llm.listProviders()) {
    let listed
    try {
      listed = await llm.listModels(provider.id)
    } catch {
      continue
    }
    for (const model of listed) {
      const entry = {
        provider: provider.id,
        provider_name: provider.name || provider.id,
        id: model.id,
        name: model.name || model.id,
      }
      try {
        const info = await llm.resolveModelInfo(provider.id, model.id)
        const efforts = info?.reasoning?.efforts
        if (Array.isArray(efforts) && efforts.length > 0) {
          entry.reasoning_options = efforts.map(effort => ({
            id: effort.id,
            name: effort.name || effort.id,
            ...(effort.id === info.reasoning.defaultEffort ? { default: true } : {}),
          }))
        }
      } catch {
        // The catalog stays usable without per-model reasoning choices.
      }
      models.push(entry)
    }
  }
  return { v: 1, type: 'models', runtime, models }
}

/** The selection an execute asks for, checked against what the runtime advertises. */
async function chooseModel(llm, defaults, command, out) {
  let selection = { ...defaults }
  if (command.model !== undefined) {
    const { provider, id } = command.model
    const known = llm.listProviders().some(p => p.id === provider)
      && (await llm.listModels(provider)).some(m => m.id === id)
    if (!known) {
      throw out.protocolError('UNKNOWN_MODEL', 'The requested model is not in this profile\'s catalog.', command.request_id)
    }
    selection = { provider, model: id }
  }
  if (command.reasoning_effort !== undefined) {
    const info = await llm.resolveModelInfo(selection.provider, selection.model)
    const efforts = (info?.reasoning?.efforts ?? []).map(effort => effort.id)
    if (!efforts.includes(command.reasoning_effort)) {
      throw out.protocolError(
        'UNSUPPORTED_REASONING_EFFORT',
        'The requested reasoning effort is not offered by the selected model.',
        command.request_id,
      )
    }
    selection = { ...selection, reasoningEffort: command.reasoning_effort }
  }
  return selection
}

/** The working directory as the runtime's filesystem service resolves it. */
async function sessionCwd(ctx) {
  const fs = ctx.get('fs')
  return fs === undefined ? process.cwd() : fs.processPath(await fs.resolve('.'))
}

function sameDirectory(left, right) {
  try {
    return realpathSync(left) === realpathSync(right)
  } catch {
    return false
  }
}

/** Resume `sessionId` through the runtime's services, or say why it cannot be resumed. */
async function resumeAgent(ctx, agents, sessionId, cwd, agentOptions, setup) {
  const query = ctx.get('sessionQuery')
  if (ctx.get('sessionPersistence') === undefined || query === undefined) {
    return { rejected: { code: 'RESUME_UNAVAILABLE', message: 'This composition persists no sessions.' } }
  }
  if (agents.get(sessionId) !== undefined) {
    return { rejected: { code: 'SESSION_BUSY', message: 'The session is live in this process.' } }
  }
  let observation
  try {
    observation = await query.observeSession(sessionId)
  } catch (error) {
    if (error?.code === 'SESSION_QUERY_SESSION_NOT_FOUND') {
      return { rejected: { code: 'SESSION_NOT_FOUND', message: 'The saved session does not exist.' } }
    }
    return { rejected: { code: 'SESSION_CORRUPT', message: 'The saved session cannot be read.' } }
  }
  try {
    const problem = adoptionProblem(observation.header, observation.events, cwd)
    if (problem !== undefined) return { rejected: { code: 'SESSION_REJECTED', message: `The saved session cannot be resumed: ${problem}.` } }
  } finally {
    observation[Symbol.dispose]?.()
  }
  try {
    const { agent } = await agents.resume({ resumeSessionId: sessionId, agentOptions, setup })
    return { agent }
  } catch {
    return { rejected: { code: 'SESSION_CORRUPT', message: 'The saved session cannot be resumed.' } }
  }
}

/**
 * One --stdio process. The runtime exits after its result even while the host keeps stdin
 * open (seed 001 §6), so stdin is released however the request ends.
 */
async function serveStdio(ctx, io) {
  const commands = commandQueue(io.stdin)
  try {
    return await serveRequest(ctx, io, commands)
  } finally {
    commands.close()
  }
}

/** Ready, one execute, its frames, one result. Returns the exit code. */
async function serveRequest(ctx, io, commands) {
  const out = channel(io)
  const { services, missing } = await coreServices(ctx)
  if (missing.length > 0) {
    throw out.protocolError('RUNTIME_UNAVAILABLE', `The profile lacks the services ${missing.join(', ')}.`)
  }
  const { agents, defaultModel, sessions, llm } = services
  const version = pluginVersion()
  out.frame(identityFrame('ready', version))

  let command
  for (;;) {
    const item = await commands.next()
    if (item.kind === 'eof') return 0 // the host closed stdin before sending a request
    if (item.kind === 'bad') throw out.protocolError('MALFORMED_COMMAND', 'A host command was not valid JSON.')
    const problem = commandProblem(item.frame)
    if (problem !== undefined) {
      throw out.protocolError('INVALID_COMMAND', `Invalid host command: ${problem}.`, item.frame?.request_id)
    }
    if (item.frame.type === 'cancel') continue // nothing runs yet
    command = item.frame
    break
  }
  const requestId = command.request_id
  const scoped = (type, fields) => ({ v: 1, type, request_id: requestId, ...fields })

  const cwd = await sessionCwd(ctx)
  let isDirectory = false
  try {
    isDirectory = statSync(command.cwd).isDirectory()
  } catch {
    isDirectory = false
  }
  if (!isDirectory) throw out.protocolError('INVALID_CWD', 'The execute cwd is not a directory.', requestId)
  if (!sameDirectory(command.cwd, cwd)) {
    throw out.protocolError('CWD_MISMATCH', 'The execute cwd is not the directory dsh runs in.', requestId)
  }
  if (command.mcp_servers.length > 0) {
    throw out.protocolError('MCP_UNSUPPORTED', 'This profile generation injects no MCP servers.', requestId)
  }
  const selection = await chooseModel(llm, defaultModel.currentSelection(), command, out)
  const agentOptions = { provider: selection.provider, model: selection.model }
  const setup = agentCtx => {
    installModelSelection(agentCtx, { current: selection, assembled: undefined })
  }

  const resumeId = command.resume_session_id
  let agent
  if (resumeId !== undefined) {
    const resumed = await resumeAgent(ctx, agents, resumeId, cwd, agentOptions, setup)
    if (resumed.rejected !== undefined) {
      out.note(`request ${requestId}: resume rejected (${resumed.rejected.code})`)
      out.frame(scoped('result', {
        status: 'failed',
        session_id: resumeId,
        resume_rejected: true,
        stop_reason: 'error',
        error: resumed.rejected,
      }))
      return 1
    }
    agent = resumed.agent
    if (agent.id !== resumeId) {
      throw out.protocolError('RESUME_MISMATCH', 'The runtime resumed another session id.', requestId)
    }
  } else {
    agent = (await agents.create({
      sessionId: `session-${randomUUID()}`,
      meta: { cwd },
      agentOptions,
      setup,
    })).agent
  }
  await agent.whenIdle()
  out.note(`request ${requestId}: session ${agent.id}${resumeId === undefined ? '' : ' (resumed)'}`)
  out.frame(scoped('session', { session_id: agent.id, resumed: resumeId !== undefined }))

  // Project the durable session events of this run (committed messages, tool calls and
  // results), so a retried provider attempt never shows twice.
  const toolNames = new Map()
  let usage
  let reason
  let lastText = ''
  let started = false
  const firstSeq = agent.session.seq
  const onEvent = (session, event) => {
    if (session !== agent.session || event.seq < firstSeq) return
    switch (event.type) {
      case 'turn/start':
        started = true
        return
      case 'assistant/attempt':
        usage = addUsage(usage, eventUsage(event.data))
        return
      case 'assistant/message': {
        usage = addUsage(usage, eventUsage(event.data))
        let joined = ''
        for (const block of event.data.message.content) {
          if (block.type === 'reasoning' && block.text) out.frame(scoped('thinking', { content: block.text }))
          else if (block.type === 'text' && block.text) {
            out.frame(scoped('text', { content: block.text }))
            joined += block.text
          }
        }
        if (started && joined !== '') lastText = joined
        return
      }
      case 'tool/call':
        toolNames.set(event.data.callId, event.data.name)
        out.frame(scoped('tool_call', {
          call_id: event.data.callId,
          name: event.data.name,
          arguments: typeof event.data.arguments === 'string' ? event.data.arguments : JSON.stringify(event.data.arguments ?? {}),
        }))
        return
      case 'tool/result': {
        if (event.surfaceOp !== 'append') return
        const message = event.data.message
        out.frame(scoped('tool_result', {
          call_id: message.toolCallId,
          name: toolNames.get(message.toolCallId) ?? message.toolName ?? 'tool',
          output: resultText(message.content),
          is_error: message.isError === true,
        }))
        return
      }
      case 'turn/end':
        reason = event.data.reason
        return
      default:
    }
  }
  let failure
  let cancelled = false
  let foreign = 0
  const stopEvents = ctx.on('session/event', onEvent)
  const stopErrors = ctx.on('agent/error', ({ agent: subject, error }) => {
    if (subject === agent) failure = error
  })
  const listening = (async () => {
    for (;;) {
      const item = await commands.next()
      if (item.kind === 'eof') return
      if (item.kind === 'bad' || commandProblem(item.frame) !== undefined) {
        foreign += 1
        continue
      }
      if (item.frame.request_id !== requestId) {
        if (item.frame.type === 'execute') {
          out.frame({
            v: 1,
            type: 'protocol_error',
            request_id: item.frame.request_id,
            code: 'RUNTIME_BUSY',
            message: 'Another request is already running in this process.',
          })
        }
        foreign += 1
        continue
      }
      if (item.frame.type === 'cancel' && !cancelled) {
        cancelled = true
        out.note(`request ${requestId}: cancel`)
        agent.cancel({ kind: 'user' })
      }
    }
  })()
  try {
    agent.followup(createUserMessage({
      content: [{ type: 'text', text: command.prompt }],
      source: { kind: 'user' },
    }))
    const subagents = ctx.get('subagents')
    for (;;) {
      await agent.whenIdle()
      const idleSeq = agent.session.seq
      if (!(await subagents?.waitForChildren(agent)) && agent.status === 'idle' && agent.session.seq === idleSeq) break
    }
    await sessions.flush(agent.session)
  } finally {
    stopEvents()
    stopErrors()
  }
  if (foreign > 0) out.note(`request ${requestId}: ${foreign} command(s) for other requests ignored`)
  if (usage !== undefined) {
    out.frame(scoped('usage', { provider: selection.provider, model: selection.model, ...usage }))
  }
  let outcome = turnOutcome(reason, cancelled)
  if (reason === undefined && failure !== undefined && !cancelled) {
    outcome = {
      status: 'failed',
      stop_reason: 'error',
      error: { code: 'RUNTIME_ERROR', message: 'The agent failed before its turn ended.' },
    }
  }
  const result = { status: outcome.status, session_id: agent.id, resume_rejected: false }
  if (outcome.status === 'completed' && lastText !== '') result.output = lastText
  result.stop_reason = outcome.stop_reason
  if (outcome.error !== undefined) result.error = outcome.error
  out.frame(scoped('result', result))
  void listening
  return outcome.status === 'failed' ? 1 : 0
}

/** Print the probe frame once the composition has the services a run needs. */
async function probe(ctx, io) {
  const { missing } = await coreServices(ctx)
  if (missing.length > 0) {
    io.stderr.write(`dsh: open-design: the profile lacks the services ${missing.join(', ')}\n`)
    return 1
  }
  io.stdout.write(encode(probeFrame(pluginVersion())) + '\n')
  return 0
}

async function models(ctx, io) {
  const { services, missing } = await coreServices(ctx)
  if (missing.length > 0) {
    io.stderr.write(`dsh: open-design: the profile lacks the services ${missing.join(', ')}\n`)
    return 1
  }
  io.stdout.write(encode(await modelsFrame(services.llm)) + '\n')
  return 0
}

/**
 * Mount the adapter: parse the app arguments and run the chosen mode, then request exit.
 * @param ctx - plugin context carrying the launcher's argument snapshot and exit request.
 */
export function apply(ctx) {
  const exit = ctx.get('appExit')
  const args = ctx.get('cmdlineArgs')
  if (exit === undefined || args === undefined) {
    throw new Error('open-design-runtime: the launcher must provide ctx.cmdlineArgs and ctx.appExit')
  }
  const io = internals
  const parsed = parseArgs(args.get())
  if (parsed.error !== undefined) {
    io.stderr.write(`${parsed.error}\n\n${USAGE}`)
    exit(1)
    return
  }
  const modes = { help: async () => { io.stdout.write(USAGE); return 0 }, probe, models, stdio: serveStdio }
  modes[parsed.mode](ctx, io).then(
    code => { exit(code) },
    error => {
      if (error instanceof ProtocolExit) {
        exit(error.exitCode)
        return
      }
      // Only the error's message: never a prompt, a credential or raw tool output.
      io.stderr.write(`dsh: open-design: ${error instanceof Error ? error.message : String(error)}\n`)
      if (parsed.mode === 'stdio') {
        io.stdout.write(encode({ v: 1, type: 'protocol_error', code: 'RUNTIME_ERROR', message: 'The runtime failed; see stderr.' }) + '\n')
      }
      exit(1)
    },
  )
}
