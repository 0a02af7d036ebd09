// Random playouts through Senridogs/hanafuda's TypeScript engine, for bench/engine_side_by_side.py --node.
// Not part of p2pkoikoi and not run by CI. Build (their code is not in this repository):
//   clone Senridogs/hanafuda, put this file in its root, npm install esbuild, then
//   npx esbuild senridogs_bench.ts --bundle --platform=node --outfile=bench.js && node bench.js 1
// Their src/engine/game.ts may import createSeededRandom and pass a random source to
// shuffleDeck/dealCards from deck.ts; an older deck.ts needs those added (see docs/engine.md).
// Prints rounds per second over argv[2] seconds of this process's CPU time (12-round games,
// random legal moves, deal to game end, after 200 warm-up games).
import { checkTurn, commitDrawToField, createNewGame, drawStep, getMatchingFieldCards, playHandCard, resolveKoiKoi, selectDrawMatch, selectHandMatch, startNextRound, type KoiKoiGameState } from './src/engine/game'
import { DEFAULT_LOCAL_RULE_SETTINGS, type GameConfig } from './src/engine/types'

const rnd = Math.random
function pick<T>(xs: readonly T[]): T { return xs[Math.floor(rnd() * xs.length)] }

function step(s: KoiKoiGameState): KoiKoiGameState {
  switch (s.phase) {
    case 'selectHandCard': {
      const hand = s.players[s.currentPlayerIndex].hand
      const matching = hand.filter((c) => getMatchingFieldCards(c, s.field).length > 0)
      return playHandCard(s, pick(matching.length ? matching : hand).id)
    }
    case 'selectFieldMatch': return selectHandMatch(s, pick(s.pendingMatches).id)
    case 'drawingDeck': return drawStep(s)
    case 'drawReveal': return commitDrawToField(s)
    case 'selectDrawMatch': return selectDrawMatch(s, pick(s.pendingMatches).id)
    case 'checkYaku': return checkTurn(s)
    case 'koikoiDecision': return resolveKoiKoi(s, rnd() < 0.5 ? 'koikoi' : 'stop')
    case 'roundEnd': return startNextRound(s)
    default: return s
  }
}

const config = { maxRounds: 12, enableAI: false, aiDifficulty: 'futsuu', player1Name: 'A', player2Name: 'B', localRules: DEFAULT_LOCAL_RULE_SETTINGS } as GameConfig
const span = Number(process.argv[2] ?? 1) * 1000
// warm up the JIT
for (let i = 0; i < 200; i++) { let s = createNewGame(config); while (s.phase !== 'gameOver') s = step(s) }
let rounds = 0
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
const t0 = cpu()
while (cpu() - t0 < span) {
  let s = createNewGame(config)
  let guard = 0
  while (s.phase !== 'gameOver' && guard++ < 100000) s = step(s)
  rounds += s.round
}
console.log((rounds / ((cpu() - t0) / 1000)).toFixed(0))
