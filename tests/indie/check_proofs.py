import json, time
from indie import group, proofs, secrets, deck
d = json.load(open(__import__('indie.rules').rules.VECTORS / 'hidden.json'))
assert [p.hex() for p in group.CARD_POINTS] == d['card_points'], 'card points'
assert group.H_CHAIN.hex() == d['generators']['chain_base']
assert [p.hex() for p in group.H_GEN] == d['generators']['h']
hm = bytes.fromhex(d['deal_secret']['host_master']); jm = bytes.fromhex(d['deal_secret']['joiner_master'])
hs = secrets.derive(hm, 1, 0); js = secrets.derive(jm, 1, 0)
print(hs.scalar.to_bytes(32,'little').hex() == d['deal_secret']['host']['scalar'], list(hs.perm)==d['deal_secret']['host']['perm'], [k.to_bytes(32,'little').hex() for k in hs.keys]==d['deal_secret']['host']['keys'])
P = group.CARD_POINTS
D1 = [group.mul(hs.scalar, P[hs.perm[j]]) for j in range(48)]
print('d1', [x.hex() for x in D1] == d['decks']['d1'])
ctx = bytes.fromhex(d['proofs']['context'])
t=time.time(); pr = proofs.shuffle_prove(ctx+b'\x01', P, D1, hs.scalar, list(hs.perm)); print('prove', time.time()-t)
print('d1 proof match', pr.hex() == d['proofs']['d1_shuffle'])
t=time.time(); print('verify ref', proofs.shuffle_verify(ctx+b'\x01', P, D1, bytes.fromhex(d['proofs']['d1_shuffle'])), time.time()-t)
print('verify mine', proofs.shuffle_verify(ctx+b'\x01', P, D1, pr))
E = [group.mul(js.scalar, D1[js.perm[j]]) for j in range(48)]
print('e', [x.hex() for x in E] == d['decks']['e'])
D2 = [group.mul(k, E[j]) for j,k in enumerate(js.rekey)]
print('d2', [x.hex() for x in D2] == d['decks']['d2'])
rp = proofs.rekey_prove(ctx+b'\x02', E, D2, js.rekey)
print('rekey match', rp.hex()==d['proofs']['d2_rekey'], proofs.rekey_verify(ctx+b'\x02', E, D2, bytes.fromhex(d['proofs']['d2_rekey'])))
ep = proofs.shuffle_prove(ctx+b'\x02', D1, E, js.scalar, list(js.perm)); print('e proof', ep.hex()==d['proofs']['e_shuffle'])
