#!/usr/bin/env python3
"""gen-unicode.py: writes src/unicode_tables.h, the Unicode data of the tokenizer.json reader (src/hf_tokenizer.c).

    /usr/bin/python3 scripts/gen-unicode.py > src/unicode_tables.h

Where each table comes from, and why:
- \\p{L} and \\p{N} (the pre-tokenizer regexes' classes): Node's own regex engine (`node` on the PATH), code point
  by code point. @huggingface/tokenizers, the JS reference the comparison tests run, matches with Node's \\p{..},
  so taking Node's tables makes the C side agree with it exactly; the Unicode version is Node's
  (process.versions.unicode, written into the header).
- White_Space (\\s of Rust's regex and of Oniguruma, which the Hugging Face library uses): the property's 25 code
  points, stable since Unicode 6.3; written out below. JS's \\s differs on two: it lacks U+0085 and has U+FEFF.
- NFC: the full canonical decompositions and the primary composites from Node's String.prototype.normalize
  (the same Unicode version as its regexes); the canonical combining classes from Python's unicodedata (Node
  exposes none), and for the code points Python's older tables do not know, probed from Node by how NFD
  reorders the mark against a mark of each known class. The script then runs the C side's algorithm (in
  Python, below) on every code point and on mark sequences and checks it against Node's NFC.
"""
import json
import subprocess
import sys
import unicodedata

NODE = r"""
const out = {L: [], N: [], assigned: [], nfd: {}, nfc: {}, version: process.versions.unicode};
const isL = /^\p{L}$/u, isN = /^\p{N}$/u, isCn = /^\p{Cn}$/u;
function ranges(test) {
  const r = [];
  for (let c = 0; c <= 0x10FFFF; c++) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    if (test(String.fromCodePoint(c))) {
      if (r.length && r[r.length - 1][1] === c - 1) r[r.length - 1][1] = c; else r.push([c, c]);
    }
  }
  return r;
}
out.L = ranges(s => isL.test(s));
out.N = ranges(s => isN.test(s));
out.assigned = ranges(s => !isCn.test(s));
for (let c = 0; c <= 0x10FFFF; c++) {
  if (c >= 0xD800 && c <= 0xDFFF) continue;
  if (c >= 0xAC00 && c <= 0xD7A3) continue; // Hangul syllables: algorithmic
  const s = String.fromCodePoint(c);
  const d = s.normalize('NFD');
  if (d !== s) { out.nfd[c] = Array.from(d).map(x => x.codePointAt(0)); out.nfc[c] = Array.from(s.normalize('NFC')).map(x => x.codePointAt(0)); }
}
process.stdout.write(JSON.stringify(out));
"""

PROBE = r"""
const req = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const res = {};
for (const [x, refs] of req) {
  const xs = String.fromCodePoint(x), r = [];
  for (const ref of refs) {
    const rs = String.fromCodePoint(ref);
    r.push([(rs + xs).normalize('NFD') === xs + rs, (xs + rs).normalize('NFD') === rs + xs]);
  }
  res[x] = r;
}
process.stdout.write(JSON.stringify(res));
"""

NFC_CHECK = r"""
const req = JSON.parse(require('fs').readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(req.map(a => Array.from(String.fromCodePoint(...a).normalize('NFC')).map(x => x.codePointAt(0)))));
"""

WHITE_SPACE = [(0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
               (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000)]


def node(script, stdin=None):
    return json.loads(subprocess.run(['node', '-e', script], input=stdin, capture_output=True, text=True,
                                     check=True).stdout)


def in_ranges(r, c):
    lo, hi = 0, len(r)
    while lo < hi:
        m = (lo + hi) // 2
        if r[m][1] < c: lo = m + 1
        elif r[m][0] > c: hi = m
        else: return True
    return False


def main():
    data = node(NODE)
    version = data['version']
    assigned = data['assigned']
    nfd = {int(k): v for k, v in data['nfd'].items()}
    nfc1 = {int(k): v for k, v in data['nfc'].items()}

    # canonical combining classes: Python's, then the code points Python does not know, probed from Node
    ccc = {}
    unknown = []
    for lo, hi in assigned:
        for c in range(lo, hi + 1):
            if unicodedata.category(chr(c)) == 'Cn': unknown.append(c)
            elif unicodedata.combining(chr(c)): ccc[c] = unicodedata.combining(chr(c))
    classes = sorted(set(ccc.values()))
    rep = {k: min(c for c, v in ccc.items() if v == k) for k in classes}
    probed = node(PROBE, json.dumps([[x, [rep[k] for k in classes]] for x in unknown]))
    for x in unknown:
        res = probed[str(x)]
        below = [k for k, (left, _) in zip(classes, res) if left]    # x sorts before a mark of class k: ccc(x) < k
        above = [k for k, (_, right) in zip(classes, res) if right]  # x sorts after it: ccc(x) > k
        if not below and not above: continue                         # a starter (class 0)
        lo, hi = max(above, default=0), min(below, default=256)
        equal = [k for k in classes if lo < k < hi]
        if len(equal) != 1: sys.exit(f'U+{x:04X}: its combining class falls between known ones ({lo}, {hi})')
        ccc[x] = equal[0]

    # the primary composites: c with NFC(c) = c and a canonical decomposition; the pair is (NFC of all but the
    # last code point of NFD(c), that last code point), which must compose back to c
    comp = {}
    for c, d in nfd.items():
        if nfc1[c] != [c] or len(d) < 2: continue
        head = node_nfc_cache.get(tuple(d[:-1]))
        if head is None: continue
        if len(head) != 1: sys.exit(f'U+{c:04X}: the head of its decomposition does not compose to one code point')
        comp[(head[0], d[-1])] = c

    # check the C side's algorithm (decompose, order, compose) against Node's NFC
    def ccc_of(c): return ccc.get(c, 0)

    SBase, LBase, VBase, TBase, LCount, VCount, TCount = 0xAC00, 0x1100, 0x1161, 0x11A7, 19, 21, 28
    NCount, SCount = VCount * TCount, LCount * VCount * TCount

    def nfc(cps):
        out = []
        for c in cps:
            if SBase <= c < SBase + SCount:
                s = c - SBase
                out += [LBase + s // NCount, VBase + (s % NCount) // TCount] + ([TBase + s % TCount] if s % TCount else [])
            else: out += nfd.get(c, [c])
        i = 0
        while i < len(out):  # canonical order: a stable sort of each run of non-zero classes
            if ccc_of(out[i]) == 0: i += 1; continue
            j = i
            while j < len(out) and ccc_of(out[j]): j += 1
            out[i:j] = sorted(out[i:j], key=ccc_of)
            i = j
        if not out: return out
        res, starter, last = [out[0]], 0, ccc_of(out[0])
        if last: last = 256
        for ch in out[1:]:
            cl = ccc_of(ch)
            s = res[starter]
            k = None
            if LBase <= s < LBase + LCount and VBase <= ch < VBase + VCount:
                k = SBase + ((s - LBase) * VCount + ch - VBase) * TCount
            elif SBase <= s < SBase + SCount and (s - SBase) % TCount == 0 and TBase < ch < TBase + TCount:
                k = s + ch - TBase
            else: k = comp.get((s, ch))
            if k is not None and (last < cl or last == 0):
                res[starter] = k
            else:
                if cl == 0: starter = len(res)
                last = cl
                res.append(ch)
        return res

    tests = [[c] for c in range(0, 0x30000) if not 0xD800 <= c <= 0xDFFF]
    marks = sorted(ccc)[:: max(1, len(ccc) // 300)]
    bases = [0x41, 0x61, 0x45, 0x65, 0x55, 0x75, 0x1100, 0xAC00, 0x0915, 0x05D0, 0x3B1, 0x1B05, 0x11099]
    for b in bases:
        for i, m in enumerate(marks):
            tests.append([b, m, marks[(i * 7) % len(marks)], 0x301, 0x316])
            tests.append([b, 0x308, m, 0x1161, 0x11A8, m])
    expect = node(NFC_CHECK, json.dumps(tests))
    bad = [(t, e, nfc(t)) for t, e in zip(tests, expect) if nfc(t) != e]
    if bad: sys.exit(f'{len(bad)} NFC mismatches, e.g. {bad[:3]}')

    def utf8len(c): return 1 if c < 0x80 else 2 if c < 0x800 else 3 if c < 0x10000 else 4
    growth = max(sum(utf8len(x) for x in nfc([c])) / utf8len(c) for c in nfd)
    assert growth <= 3, growth

    w = sys.stdout.write
    w('/* unicode_tables.h: generated by scripts/gen-unicode.py; do not edit. Unicode %s (Node %s\'s regex\n'
      ' * classes and String.prototype.normalize; combining classes from Python %s\'s unicodedata %s, probed\n'
      ' * from Node for the code points it lacks). Private to src/hf_tokenizer.c. */\n'
      % (version, subprocess.run(['node', '--version'], capture_output=True, text=True).stdout.strip(),
         sys.version.split()[0], unicodedata.unidata_version))
    w('#ifndef ATTNVIZ_UNICODE_TABLES_H\n#define ATTNVIZ_UNICODE_TABLES_H\n#include <stdint.h>\n\n')
    w('#define AVU_UNICODE_VERSION "%s"\n' % version)
    w('#define AVU_NFC_MAX_GROWTH 3 /* NFC of one code point is at most 3 times its UTF-8 bytes (checked) */\n\n')

    def table(name, rows, per):
        w('static const uint32_t %s[%d][%d] = {\n' % (name, len(rows), per))
        line = ' '
        for r in rows:
            item = ' {' + ','.join('0x%X' % v for v in r) + '},'
            if len(line) + len(item) > 116: w(line + '\n'); line = ' '
            line += item
        w(line + '\n};\n')

    w('/* \\p{L}: [first, last] ranges, ascending */\n'); table('avu_letter', data['L'], 2)
    w('/* \\p{N} */\n'); table('avu_number', data['N'], 2)
    w('/* White_Space */\n'); table('avu_space', WHITE_SPACE, 2)
    cr = []
    for c in sorted(ccc):
        if cr and cr[-1][1] == c - 1 and cr[-1][2] == ccc[c]: cr[-1][1] = c
        else: cr.append([c, c, ccc[c]])
    w('/* canonical combining class: [first, last, class] for the non-zero ones */\n'); table('avu_ccc', cr, 3)
    flat, rows = [], []
    for c in sorted(nfd):
        rows.append([c, len(flat), len(nfd[c])]); flat += nfd[c]
    w('/* full canonical decompositions (Hangul syllables are algorithmic): [code point, offset into\n'
      ' * avu_decomp_cp, length] */\n')
    table('avu_decomp', rows, 3)
    w('static const uint32_t avu_decomp_cp[%d] = {\n' % len(flat))
    for i in range(0, len(flat), 12): w('  ' + ', '.join('0x%X' % v for v in flat[i:i + 12]) + ',\n')
    w('};\n')
    w('/* primary composites: [first, second, composite], ascending by (first, second) */\n')
    table('avu_compose', [[a, b, c] for (a, b), c in sorted(comp.items())], 3)
    w('\n#endif\n')


node_nfc_cache = {}
if __name__ == '__main__':
    # the NFC of every decomposition's head, asked of Node once for all
    _d = node(NODE)
    heads = sorted({tuple(v[:-1]) for v in _d['nfd'].values() if len(v) >= 2})
    for h, r in zip(heads, node(NFC_CHECK, json.dumps([list(h) for h in heads]))): node_nfc_cache[h] = r
    main()
