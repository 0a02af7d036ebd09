import json, hashlib
from indie import rules, engine, yaku
from indie.deck import CODES, CARD
d = json.load(open(__import__('indie.rules').rules.VECTORS.__str__() + '/../vectors/hidden.json'))
h = d['hand_swap_deal']
r = rules.preset('rulebook'); r['deal']='hidden'; r['rounds']=1
enc = rules.encode(r); fp = rules.fingerprint(enc)
print('fp', fp.hex()==h['rules_fingerprint'])
seed = bytes.fromhex(d['state']['match_seed'])
e = engine.Engine.start(r, fp, seed)
print('dealer', e.dealer)
dealt = d['decks']['dealt']
nd, dl = e.nondealer, e.dealer
hands = {nd: [], dl: []}; fieldc = []
for j in range(24):
    k = j % 6
    (hands[nd] if k < 2 else fieldc if k < 4 else hands[dl]).append(dealt[j])
stock = dealt[24:]
chain = hashlib.sha256(b"p2pkoikoi/v2/hidden/decks\0").digest()
pending_play = None
for i, m in enumerate(h['moves']):
    mine = e.hidden_hash(chain).hex()
    ok = mine == m['state_hash_before']
    print(i, m['seat'], m['kind'], m.get('action'), 'OK' if ok else 'MISMATCH', e.phase, e.to_act)
    if not ok:
        print(e.public().hex()); break
    k = m['kind']
    if k.startswith('deck'):
        chain = hashlib.sha256(chain + bytes.fromhex(m['deck'])).digest()
    elif k == 'keys':
        e.deal_known([hands[0], hands[1]], [8, 8], fieldc)
    elif k == 'act':
        a = m['action']
        if a.startswith('play'):
            pending_play = (m['seat'], a)
        else:
            e.apply_decision(m['seat'], a)
    elif k == 'draw':
        s, a = pending_play
        e.apply_play(s, a, stock[24 - e.stock])
    elif k == 'declare' and m['seat'] == 1:
        if e.swap_decision == 'swap':
            hh = [hands[1], hands[0]]
        else:
            hh = [hands[0], hands[1]]
        e.known = [engine.mask(hands[0]), engine.mask(hands[1])]
        e.after_declarations([None, None])
print('final', e.phase, e.scores, e.winner)
