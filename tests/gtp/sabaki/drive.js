// Drives engine-gtp with Sabaki's own GTP library (@sabaki/gtp: Controller and
// ControllerStateTracker, what Sabaki uses to talk to engines): it syncs a game with handicap as
// Sabaki does on opening one, steps back a move, streams lz-analyze and kata-analyze and breaks
// them off with the next command as Sabaki does, then asks for a move. Prints one JSON object.
// Usage: NODE_PATH=<folder with @sabaki/gtp> node drive.js '["engine-gtp", "arg", ...]'
'use strict'
const {Controller, ControllerStateTracker} = require('@sabaki/gtp')

const [path, ...args] = JSON.parse(process.argv[2])
const controller = new Controller(path, args)
const tracker = new ControllerStateTracker(controller)
const sent = []
controller.on('command-sent', ({command}) => sent.push(command.name))

const game = [
  {name: 'set_free_handicap', args: ['C3', 'G7']},
  {name: 'play', args: ['W', 'E5']},
  {name: 'play', args: ['B', 'C7']},
  {name: 'play', args: ['W', 'G3']}
]

async function ask(name, ...args) {
  const response = await tracker.queueCommand({name, args})
  return {error: response.error, content: response.content}
}

// Streams `name` until `count` info lines came, then sends `name` of the engine as Sabaki sends
// its next command: the engine must end the analysis response and answer that one.
async function analyze(name, args, count) {
  const lines = []
  let next = null
  const done = controller.sendCommand({name, args}, ({line}) => {
    if (line.startsWith('info ')) lines.push(line)
    if (lines.length === count && next === null) next = controller.sendCommand({name: 'name'})
  })
  const response = await done
  const after = next === null ? null : await next
  return {error: response.error, lines, next: after && after.content}
}

async function main() {
  controller.start()
  const out = {}
  out.name = await ask('name')
  out.knowsAnalyze = await tracker.knowsCommand('lz-analyze')
  await tracker.sync({komi: 0.5, boardsize: [9, 9], timeSettings: null, history: game})
  out.syncSent = sent.slice()
  out.full = await ask('showboard')
  sent.length = 0
  await tracker.sync({komi: 0.5, boardsize: [9, 9], timeSettings: null, history: game.slice(0, 3)})
  out.backSent = sent.slice()
  out.back = await ask('showboard')
  out.lz = await analyze('lz-analyze', ['W', '10'], 3)
  out.kata = await analyze('kata-analyze', ['W', '10', 'ownership', 'true'], 2)
  out.genmove = await ask('genmove', 'W')
  out.state = tracker.state
  await controller.stop()
  console.log(JSON.stringify(out))
}

main().catch(err => {
  console.error(err)
  process.exit(1)
})
