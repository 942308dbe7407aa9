// Drive the bundle's open-design-runtime plugin with stub Harness services (plain Node).
//
// Usage: node drive.mjs <package dir> <app args...>
// Env: STUB_SCRIPT (text | tool | error | hang | throw), STUB_SESSIONS (a JSON file of
// known session ids -> {cwd}), STUB_LOG (a JSON file the stub writes what it was asked).
// The stub stands in for ctx.agents / ctx.sessions / ctx.sessionQuery / ctx.llm: it emits
// the durable session events a real agent loop appends, and records create/resume/cancel.

import { readFileSync, writeFileSync, existsSync, realpathSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'

const [packageDir, ...appArgs] = process.argv.slice(2)
const script = process.env.STUB_SCRIPT ?? 'text'
const sessionsFile = process.env.STUB_SESSIONS
const log = { created: [], resumed: [], cancelled: [], prompts: [], flushed: 0 }
const known = sessionsFile && existsSync(sessionsFile) ? JSON.parse(readFileSync(sessionsFile, 'utf8')) : {}

const listeners = new Map()
const on = (name, handler) => {
  const list = listeners.get(name) ?? []
  list.push(handler)
  listeners.set(name, list)
  return () => list.splice(list.indexOf(handler), 1)
}
const emit = (name, ...args) => { for (const handler of [...(listeners.get(name) ?? [])]) handler(...args) }

function makeAgent(id, cwd) {
  let idle = Promise.resolve()
  let finish
  const session = { seq: 0, header: { cwd } }
  const append = (type, data, extra = {}) => {
    const event = { type, seq: session.seq, data, ...extra }
    session.seq += 1
    emit('session/event', session, event)
  }
  const agent = {
    id,
    session,
    status: 'idle',
    whenIdle: () => idle,
    followup(message) {
      log.prompts.push(message.content[0].text)
      agent.status = 'running'
      idle = new Promise(resolve => { finish = resolve })
      const done = reason => {
        append('turn/end', { turn: 1, reason })
        agent.status = 'idle'
        finish()
      }
      let aborted = false
      agent.abort = () => { aborted = true }
      setTimeout(() => {
        append('turn/start', { turn: 1 })
        if (script === 'hang') {
          // Like the agent loop: a cancel before or during the turn ends it as aborted.
          if (aborted) done({ kind: 'aborted', reason: { kind: 'user' } })
          else agent.abort = () => done({ kind: 'aborted', reason: { kind: 'user' } })
          return
        }
        if (script === 'error') {
          done({ kind: 'error', error: { code: 'SERVER', message: 'Internal server error' } })
          return
        }
        if (script === 'throw') {
          emit('agent/error', { agent, error: new Error('boom') })
          agent.status = 'idle'
          finish()
          return
        }
        if (script === 'tool') {
          append('assistant/message', { message: { content: [
            { type: 'reasoning', text: 'Plan it.' },
            { type: 'text', text: 'Writing.' },
          ] }, usage: { inputTokens: 5, outputTokens: 2 } })
          append('tool/call', { callId: 'c1', name: 'write', arguments: '{"file_path":"a.txt"}' })
          append('tool/result', { message: { toolCallId: 'c1', content: [{ type: 'text', text: 'Created' }], isError: false } }, { surfaceOp: 'append' })
          append('tool/result', { message: { toolCallId: 'c1', content: [{ type: 'text', text: 'replaced' }] } }, { surfaceOp: 'replace' })
        }
        append('assistant/message', { message: { content: [{ type: 'text', text: 'Hello.' }] }, stream: [
          { type: 'chunk', chunk: { type: 'usage', usage: { inputTokens: 10, outputTokens: 3, cacheReadTokens: 1 } } },
        ] })
        done({ kind: 'completed' })
      }, 10)
    },
    cancel(cause) {
      log.cancelled.push(cause)
      agent.abort?.()
    },
  }
  return agent
}

const live = new Map()
const services = {
  agents: {
    get: id => live.get(id),
    async create({ sessionId, meta, agentOptions }) {
      log.created.push({ sessionId, cwd: meta.cwd, agentOptions })
      const agent = makeAgent(sessionId, meta.cwd)
      live.set(sessionId, agent)
      return { agent }
    },
    async resume({ resumeSessionId, agentOptions }) {
      log.resumed.push({ resumeSessionId, agentOptions })
      const agent = makeAgent(resumeSessionId, known[resumeSessionId].cwd)
      live.set(resumeSessionId, agent)
      return { agent }
    },
  },
  agentDefaultModel: { currentSelection: () => ({ provider: 'deepseek-official', model: 'deepseek-flash' }) },
  sessions: { async flush() { log.flushed += 1 } },
  sessionPersistence: {},
  sessionQuery: {
    async observeSession(id) {
      if (!(id in known)) {
        const error = new Error(`session "${id}" not found`)
        error.code = 'SESSION_QUERY_SESSION_NOT_FOUND'
        throw error
      }
      return { header: { cwd: known[id].cwd }, events: [], [Symbol.dispose]() {} }
    },
  },
  llm: {
    listProviders: () => [{ id: 'deepseek-official', name: 'DeepSeek' }],
    listModels: async () => [{ id: 'deepseek-flash', name: 'Flash' }],
    resolveModelInfo: async () => ({ reasoning: { efforts: [{ id: 'low', name: 'Low' }, { id: 'high', name: 'High' }], defaultEffort: 'high' } }),
  },
  fs: { resolve: async p => p, processPath: () => realpathSync(process.cwd()) },
  cmdlineArgs: { get: () => appArgs },
  // Like the real dsh, an exit request sets the code and lets the event loop drain: a
  // plugin that still reads stdin keeps the process alive.
  appExit: code => {
    if (process.env.STUB_LOG) writeFileSync(process.env.STUB_LOG, JSON.stringify(log))
    process.exitCode = code
  },
}
const ctx = { get: name => services[name], on }

const plugin = await import(pathToFileURL(join(packageDir, 'index.js')).href)
plugin.apply(ctx)
