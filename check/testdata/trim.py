"""trim.py SRC OUT PURPOSE SESSION[:RPCIDS] ... [--noses EXCH,...]
   trim.py SRC OUT PURPOSE all      (every record: a stdio trace)

Keeps the records of the given sessions (by order of appearance, 1-based),
optionally only the exchanges carrying the given JSON-RPC ids (plus
GET/DELETE/notification exchanges), drops what the checker does not read
for readability (connection open/close, wall clock, request body ends,
headers other than the protocol's), renumbers, and writes JSONL with a
header saying where it came from."""
import json, sys
src, out, purpose = sys.argv[1:4]
specs = sys.argv[4:]
noses = []
if '--noses' in specs:
    i = specs.index('--noses'); noses = [int(x) for x in specs[i+1].split(',')]; specs = specs[:i]
lines = [json.loads(l) for l in open(src)]
header = lines[0]['header']; recs = lines[1:]
# session of each exchange; order of sessions
exsess = {}; order = []
for r in recs:
    if r['kind'] in ('request-head', 'response-head'):
        sid = dict((h[0].lower(), h[1]) for h in r['http']['header']).get('mcp-session-id')
        if sid:
            if sid not in order: order.append(sid)
            exsess.setdefault(r['exchange'], sid)
# rpc ids of each exchange's request
exid = {}; exmeth = {}
for r in recs:
    if r['kind'] == 'message' and r['dir'] == 'c>s':
        exid[r['exchange']] = r['rpc'].get('id', '')
    if r['kind'] == 'request-head':
        exmeth[r['exchange']] = r['http']['method']
keepex = set(noses)
if specs == ['all']:
    keepex = {r['exchange'] for r in recs}
    specs = []
for sp in specs:
    n, _, ids = sp.partition(':')
    sid = order[int(n) - 1]
    ids = set(ids.split(',')) if ids else None
    for ex, s in exsess.items():
        if s != sid: continue
        if ids is None or exmeth.get(ex) != 'POST' or exid.get(ex, '') in ids or exid.get(ex, '') == '':
            keepex.add(ex)
KEEPH = {'host', 'mcp-session-id', 'last-event-id', 'origin', 'content-type'}
outl = []
t0 = None
for r in recs:
    if r['exchange'] not in keepex: continue
    if r['kind'] in ('conn-open', 'conn-close', 'annotation'): continue
    if r['kind'] == 'body-end' and r['dir'] == 'c>s': continue
    r = dict(r); r.pop('wall', None)
    if t0 is None: t0 = r['offset_ns']
    r['offset_ns'] -= t0
    if 'http' in r:
        h = dict(r['http']); h.pop('proto', None)
        h['header'] = [x for x in h['header'] if x[0].lower() in KEEPH]
        r['http'] = h
    if r['kind'] == 'sse-event':
        r.pop('raw', None)
    r['index'] = len(outl)
    outl.append(r)
hdr = {'format_version': header['format_version'], 'tasksim_version': header['tasksim_version'],
       'command': header['command'], 'protocol': '2025-11-25', 'seed': 0,
       'labels': [[k, v] for k, v in header['labels'] if k == 'recorder'] + [ ['purpose', purpose], ['trimmed', 'tasksim trace export --format jsonl, trimmed to the records the checker reads']]}
with open(out, 'w') as f:
    f.write(json.dumps({'header': hdr}, separators=(',', ':'), ensure_ascii=False) + '\n')
    for r in outl:
        f.write(json.dumps(r, separators=(',', ':'), ensure_ascii=False) + '\n')
print(out, len(outl))
