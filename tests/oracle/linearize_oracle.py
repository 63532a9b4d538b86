#!/usr/bin/python3
"""An independent numpy forward pass with swapped attention, against `attnviz linearize` (issue 34).

Written from docs/model.md ("The forward pass", "Swapped attention: what the model loses": the pass, the
measures, the CLI JSON), docs/variant-formulas.md (the variants) and docs/conventions.md (the portable stream
that draws Performer's ω), never from src/. Everything is float64 except where the docs round to float32:
the weights, and each layer's q, k, v after RoPE (the captured tensors and the cache).

Checks:
- a tiny random checkpoint this script writes (dim 32, 3 layers, 4 heads, 2 KV heads: GQA), several variants,
  several head choices, both paths (--path matrix|recurrent);
- stories260K ($ATTNVIZ_SHARED/data/stories260K) on text128: loss_original = 1.0739, softmax, elu+1 at
  layer 2, elu+1 everywhere, Performer everywhere with a fixed seed (ω drawn here from the documented stream,
  and compared with the library's own ω when node and build/wasm are there), a few heads by --heads;
- negative controls: one wrong convention each must miss the CLI by a clear margin (the margins printed).
Usage: linearize_oracle.py path/to/attnviz
"""
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model_oracle import encode, make_vocab, write_tokenizer  # noqa: E402  (the encoder: not kernel code)
from shared_data import ROOT, skipped, stories_dir  # noqa: E402

# Tolerances (stated): the C pass keeps activations in float32 where this one keeps float64, so a logit
# agrees to ~1e-6 relative; a per-position loss or KL (nats) to TOL_NATS absolute + TOL_REL relative.
TOL_NATS = 2e-5
TOL_REL = 1e-5
LOSS_STORIES = 1.0739      # the shared data's fact (README: mean next-token loss on text128)

# ---------------------------------------------------------------------------------------------------
# the checkpoint (docs/model.md, "Files")


def load_model(path):
    raw = open(path, 'rb').read()
    dim, hid, L, H, KVH, vocab, seq = struct.unpack('<7i', raw[:28])
    shared = vocab > 0
    vocab = abs(vocab)
    hs = dim // H
    kvd = hs * KVH
    f = np.frombuffer(raw, dtype='<f4', offset=28).astype(np.float64)
    w, at = {}, 0
    for name, shape in [('emb', (vocab, dim)), ('rms_att', (L, dim)), ('wq', (L, dim, dim)), ('wk', (L, kvd, dim)),
                        ('wv', (L, kvd, dim)), ('wo', (L, dim, dim)), ('rms_ffn', (L, dim)), ('w1', (L, hid, dim)),
                        ('w2', (L, dim, hid)), ('w3', (L, hid, dim)), ('rms_final', (dim,)), ('freq', (2, seq, hs // 2))]:
        size = int(np.prod(shape))
        w[name] = f[at:at + size].reshape(shape)
        at += size
    if shared:
        w['cls'] = w['emb']
    else:
        w['cls'] = f[at:at + vocab * dim].reshape(vocab, dim)
        at += vocab * dim
    assert at == f.size, 'checkpoint length'
    w.update(dim=dim, L=L, H=H, KVH=KVH, hs=hs, vocab=vocab, seq=seq)
    return w


def write_model(path, rng, dim=32, hid=48, L=3, H=4, KVH=2, vocab=279, seq=48, shared=True, bos_qk=None):
    """A llama2.c legacy checkpoint with random weights. bos_qk: layer 0's wq and wk moved (each row along
    the BOS row's normalised input) so that every entry of q and k at position 0 (BOS, unrotated) is bos_qk."""
    hs = dim // H
    kvd = hs * KVH
    t = [rng.normal(0, 0.5, (vocab, dim)), 1 + 0.1 * rng.normal(size=(L, dim)), rng.normal(0, 0.3, (L, dim, dim)),
         rng.normal(0, 0.3, (L, kvd, dim)), rng.normal(0, 0.3, (L, kvd, dim)), rng.normal(0, 0.3, (L, dim, dim)),
         1 + 0.1 * rng.normal(size=(L, dim)), rng.normal(0, 0.3, (L, hid, dim)), rng.normal(0, 0.3, (L, dim, hid)),
         rng.normal(0, 0.3, (L, hid, dim)), 1 + 0.1 * rng.normal(size=dim), rng.normal(size=(2, seq, hs // 2))]
    if not shared:
        t.append(rng.normal(0, 0.5, (vocab, dim)))
    t = [f32(a) for a in t]
    if bos_qk is not None:
        xb = rmsnorm(t[0][1], t[1][0])
        for wm in (t[2][0], t[3][0]):
            wm += np.outer(bos_qk - wm @ xb, xb) / (xb @ xb)
    with open(path, 'wb') as f:
        f.write(struct.pack('<7i', dim, hid, L, H, KVH, vocab if shared else -vocab, seq))
        for a in t:
            f.write(a.astype(np.float32).tobytes())


# ---------------------------------------------------------------------------------------------------
# the portable stream (docs/conventions.md): xoshiro256** seeded through splitmix64, polar normals

M64 = (1 << 64) - 1


def _rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M64


class Stream:
    def __init__(self, seed):
        x, self.s = seed & M64, []
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & M64
            z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
            self.s.append(z ^ (z >> 31))

    def next(self):
        s = self.s
        r = (_rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return r

    def uniform(self):
        return (self.next() >> 11) * 2.0 ** -53

    def normal(self):
        while True:   # Marsaglia's polar method, one normal per accepted pair
            u, v = 2 * self.uniform() - 1, 2 * self.uniform() - 1
            s = u * u + v * v
            if 0 < s < 1:
                return u * math.sqrt(-2 * math.log(s) / s)


def performer_omega(m, d, seed):
    """iid ω (m×d): the stream seeded with 3·2³² + seed, m·d normals row by row, as float32."""
    st = Stream(3 * 2 ** 32 + seed)
    return np.array([st.normal() for _ in range(m * d)], dtype=np.float32).reshape(m, d).astype(np.float64)


def library_omega(m, d, seed):
    """The library's own ω through the JS loader (web/wasm/attnviz.mjs, lab.randomMatrix), or None."""
    wasm = os.path.join(ROOT, 'build', 'wasm', 'attnviz.wasm')
    node = shutil.which('node')
    if not node or not os.path.exists(wasm):
        return None
    js = ("const {loadAttnviz} = await import(%s); const av = await loadAttnviz({source: new URL(%s)});"
          "const r = av.lab(8, %d).randomMatrix('omega', {variant: 'performer', m: %d, seed: %d});"
          "console.log(JSON.stringify(Array.from(r.data)));") % (
        json.dumps('file://' + os.path.join(ROOT, 'web', 'wasm', 'attnviz.mjs')), json.dumps('file://' + wasm), d, m, seed)
    r = subprocess.run([node, '--input-type=module', '-e', js], capture_output=True, text=True)
    if r.returncode:
        return None
    return np.array(json.loads(r.stdout), dtype=np.float64).reshape(m, d)


# ---------------------------------------------------------------------------------------------------
# the variants' causal matrices (docs/variant-formulas.md), float64 from the float32 q, k of one head.
# A spec is a dict: {'name', knobs..., and for the negative controls 'wrong': a convention to break}.

def _lower(n):
    return np.tril(np.ones((n, n), dtype=bool))


def _normalise(S, n, add=0.0, clamp=None):
    S = np.where(_lower(n), S, 0.0)
    den = S.sum(1, keepdims=True)
    den = np.maximum(den, clamp) if clamp is not None else den + add
    return S / np.where(den == 0, 1.0, den)     # a zero denominator leaves the row as its numerators


def variant_matrix(spec, q, k, hs):
    n = q.shape[0]
    name, wrong = spec['name'], spec.get('wrong')
    scale = spec.get('scale') or 1 / math.sqrt(hs)
    if name == 'softmax':
        s = scale * (q @ k.T)
        s = np.where(_lower(n), s, -np.inf)
        A = np.exp(s - s.max(1, keepdims=True))
        return A / A.sum(1, keepdims=True)
    if name in ('elu', 'relu'):
        if wrong == 'scaled-inputs':           # the scale applied to the feature map's inputs
            q, k = q * math.sqrt(scale), k * math.sqrt(scale)
        phi = (lambda x: np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))) if name == 'elu' else (lambda x: np.maximum(x, 0))
        return _normalise(phi(q) @ phi(k).T, n, add=0.0 if wrong == 'no-eps' else 1e-6)
    if name == 'exp':
        return _normalise(np.exp(q - q.max(1, keepdims=True)) @ np.exp(k - k.max()).T, n)
    if name == 'taylor':
        order = spec.get('order', 2)
        s = scale * (q @ k.T)
        return _normalise(sum(s ** r / math.factorial(r) for r in range(order + 1)), n)
    if name == 'cosformer':
        i = np.arange(1, n + 1)
        nn = spec['seq'] if wrong == 'n-is-seq_len' else n      # the text's length, not the model's seq_len
        S = (np.maximum(q, 0) @ np.maximum(k, 0).T) * np.cos(np.pi * (i[:, None] - i[None, :]) / (2 * nn))
        return _normalise(S, n, clamp=1e-6)
    if name == 'focused':
        p = spec.get('p', 3.0)

        def phi(x):
            y = (np.maximum(x, 0) + 1e-6) / math.log(2)
            u = y / y.max(1, keepdims=True)
            yp = u ** p
            return np.linalg.norm(y, axis=1, keepdims=True) * yp / np.linalg.norm(yp, axis=1, keepdims=True)
        return _normalise(phi(q) @ phi(k).T, n, add=(1 if wrong == 'eps-not-n' else n) * 1e-6)
    if name == 'hedgehog':                      # identity W: φ = [exp(x − c), exp(−x − c)]
        cq = np.abs(q).max(1, keepdims=True)
        ck = np.abs(k).max()
        fq = np.concatenate([np.exp(q - cq), np.exp(-q - cq)], 1)
        fk = np.concatenate([np.exp(k - ck), np.exp(-k - ck)], 1)
        return _normalise(fq @ fk.T, n)
    if name == 'performer':
        om = spec['omega']
        m = om.shape[0]
        eps = spec.get('feature_eps', 1e-6)
        sc = 1.0 if wrong == 'no-sqrt-scale' else math.sqrt(scale)

        def phi(x, per_row):
            x = sc * x
            u = x @ om.T
            h = 0.5 * (x * x).sum(1, keepdims=True)
            c = u.max(1, keepdims=True) if per_row else u.max()
            f = m ** -0.5 * (np.exp(u - c - h) + eps)
            return np.where(h > 1e4, m ** -0.5 * eps, f)
        return _normalise(phi(q, True) @ phi(k, wrong == 'keys-per-row').T, n)
    raise ValueError(name)


# ---------------------------------------------------------------------------------------------------
# the forward pass, layer by layer over the whole text, some heads swapped (docs/model.md)


def rmsnorm(x, g):
    return g * x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5)


def rope(x, hs):
    """Rotate each head's pairs (2i, 2i+1) of the rows of x (n × heads·hs) by pos·10000^(−2i/hs)."""
    n = x.shape[0]
    j = np.arange(0, x.shape[1], 2) % hs
    a = np.arange(n)[:, None] * 10000.0 ** (-j / hs)[None, :]
    c, s = np.cos(a), np.sin(a)
    out = np.empty_like(x)
    out[:, 0::2] = x[:, 0::2] * c - x[:, 1::2] * s
    out[:, 1::2] = x[:, 0::2] * s + x[:, 1::2] * c
    return out


def f32(x):
    return x.astype(np.float32).astype(np.float64)


def forward(w, ids, swapped=(), spec=None):
    """Logits (n × vocab, float64) with the heads in `swapped` (a set of (layer, head)) using spec's variant."""
    n, hs, H, KVH = len(ids), w['hs'], w['H'], w['KVH']
    group = H // KVH
    x = w['emb'][ids].copy()
    for l in range(w['L']):
        xb = rmsnorm(x, w['rms_att'][l])
        q = f32(rope(xb @ w['wq'][l].T, hs)).reshape(n, H, hs)
        k = f32(rope(xb @ w['wk'][l].T, hs)).reshape(n, KVH, hs)
        v = f32(xb @ w['wv'][l].T).reshape(n, KVH, hs)
        out = np.zeros((n, w['dim']))
        for h in range(H):
            if (l, h) in swapped:
                kv = h % KVH if spec.get('wrong') == 'kv-map' else h // group
                A = variant_matrix(spec, q[:, h], k[:, kv], hs)
            else:
                kv = h // group
                A = variant_matrix({'name': 'softmax'}, q[:, h], k[:, kv], hs)
            out[:, h * hs:(h + 1) * hs] = A @ v[:, kv]
        x = x + out @ w['wo'][l].T
        xb = rmsnorm(x, w['rms_ffn'][l])
        h1, h3 = xb @ w['w1'][l].T, xb @ w['w3'][l].T
        x = x + (h1 / (1 + np.exp(-h1)) * h3) @ w['w2'][l].T
    return rmsnorm(x, w['rms_final']) @ w['cls'].T


def log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def measures(lo, ls, ids, wrong=None):
    """Per position t = 0..T−2 and the means (docs/model.md, "The measures")."""
    T = len(ids)
    po, ps = log_softmax(lo[:T - 1]), log_softmax(ls[:T - 1])
    tgt = np.array(ids[1:])
    loss = -ps[np.arange(T - 1), tgt]
    loss_o = -po[np.arange(T - 1), tgt]
    if wrong == 'kl-reversed':
        kl = (np.exp(ps) * (ps - po)).sum(1)
    else:
        kl = (np.exp(po) * (po - ps)).sum(1)
    agree = (lo[:T - 1].argmax(1) == ls[:T - 1].argmax(1)).astype(float)
    div = T if wrong == 'mean-over-T' else T - 1
    return {'loss': loss.sum() / div, 'loss_original': loss_o.sum() / div, 'kl_mean': kl.sum() / div,
            'top1_agreement': agree.sum() / div,
            'per_position': {'loss': loss, 'loss_original': loss_o, 'kl': kl, 'agree': agree}}


def continuation(w, prompt_ids, steps, swapped, spec):
    """Greedy: the argmax of the last position (first of equals), the whole pass again per token; stops
    before BOS or at seq_len. Also the smallest top-1/top-2 gap met (a near-tie would excuse a mismatch)."""
    ids, gap = list(prompt_ids), math.inf
    for _ in range(steps):
        if len(ids) >= w['seq']:
            break
        z = forward(w, ids, swapped, spec)[-1]
        top = np.sort(z)[-2:]
        gap = min(gap, top[1] - top[0])
        nxt = int(np.argmax(z))
        if nxt == 1:
            break
        ids.append(nxt)
    return ids[len(prompt_ids):], gap


# ---------------------------------------------------------------------------------------------------
# comparing with the CLI


def chosen_heads(w, layers, heads):
    """--layers alone: every head of those layers; --heads alone: those heads in every layer; neither: all."""
    ls = layers if layers is not None else range(w['L'])
    hs = heads if heads is not None else range(w['H'])
    return {(l, h) for l in ls for h in hs}


def cli_flags(spec):
    flags = ['--variant', spec['name']]
    for key, flag in (('order', '--order'), ('p', '--p'), ('m', '--m'), ('seed', '--seed'), ('feature_eps', '--feature-eps')):
        if key in spec:
            flags += [flag, str(spec[key])]
    return flags


def err_nats(got, want):
    """max over entries of |got − want| / (TOL_NATS + TOL_REL·|want|): ≤ 1 passes."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return math.inf
    return float((np.abs(got - want) / (TOL_NATS + TOL_REL * np.abs(want))).max()) if got.size else 0.0


def compare(out, ref):
    """The CLI's JSON against the oracle's measures of one text: the worst error (units of the tolerance) and what."""
    t = out['texts'][0]
    pp = t['per_position']
    parts = {
        'loss': err_nats(out['loss'], ref['loss']), 'loss_original': err_nats(out['loss_original'], ref['loss_original']),
        'kl_mean': err_nats(out['kl_mean'], ref['kl_mean']),
        'top1_agreement': err_nats(out['top1_agreement'], ref['top1_agreement']),
        'perplexity': err_nats(math.log(out['perplexity']), ref['loss']),
        'perplexity_original': err_nats(math.log(out['perplexity_original']), ref['loss_original']),
        'text.loss': err_nats(t['loss'], ref['loss']), 'text.kl_mean': err_nats(t['kl_mean'], ref['kl_mean']),
        'pp.loss': err_nats(pp['loss'], ref['per_position']['loss']),
        'pp.loss_original': err_nats(pp['loss_original'], ref['per_position']['loss_original']),
        'pp.kl': err_nats(pp['kl'], ref['per_position']['kl']),
        'pp.agree': err_nats(pp['agree'], ref['per_position']['agree']),
    }
    worst = max(parts, key=parts.get)
    absolute = max(float(np.abs(np.asarray(pp[k], dtype=np.float64) - ref['per_position'][k]).max()) if len(pp[k]) else 0.0
                   for k in ('loss', 'loss_original', 'kl'))
    return parts[worst], worst, absolute


class Report:
    def __init__(self):
        self.passed = self.failed = 0
        self.worst = {}          # what -> the largest error (units of the tolerance) over the passing checks
        self.margins = []
        self.where = ''
        self.worst_abs = 0.0    # nats, over every per-position loss and KL compared

    def check(self, ok, line):
        self.passed += bool(ok)
        self.failed += not ok
        print(('ok   ' if ok else 'FAIL ') + line, flush=True)

    def note_err(self, key, e):
        self.worst[key] = max(self.worst.get(key, 0.0), e)


def run_cli(cli, args):
    r = subprocess.run([cli, 'linearize'] + args, capture_output=True, text=True)
    if r.returncode:
        return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else 'exit %d' % r.returncode
    return json.loads(r.stdout), None


ORIGINAL = {}   # the original model's greedy continuation, per (model, prompt, steps)


def case(rep, cli, w, base, ids, spec, layers=None, heads=None, path='matrix', steps=0, label=None, prompt_ids=None):
    """One linearize run against the oracle; returns the CLI's JSON and the oracle's measures (or None)."""
    args = base + cli_flags(spec) + ['--path', path, '--steps', str(steps)]
    if layers is not None:
        args += ['--layers', ','.join(map(str, layers))]
    if heads is not None:
        args += ['--heads', ','.join(map(str, heads))]
    label = label or '%s layers=%s heads=%s path=%s' % (spec['name'], layers, heads, path)
    out, why = run_cli(cli, args)
    if out is None:
        rep.check(False, '%s: the CLI failed: %s' % (label, why))
        return None, None
    sw = chosen_heads(w, layers, heads)
    got_sw = {tuple(p) for p in out['swapped']}
    lo = forward(w, ids)
    ls = forward(w, ids, sw, spec)
    ref = measures(lo, ls, ids)
    e, what, absolute = compare(out, ref)
    rep.note_err(spec['name'] + '/' + path, e)
    rep.worst_abs = max(rep.worst_abs, absolute)
    rep.check(e <= 1 and got_sw == sw and out['texts'][0]['n'] == len(ids) and out['positions'] == len(ids) - 1,
              '%s: %d heads, loss %.6f (numpy %.6f), kl_mean %.3e, top1 %.4f; worst %.2f tol (%s)' % (
                  label, len(got_sw), out['loss'], ref['loss'], out['kl_mean'], out['top1_agreement'], e, what))
    if steps:
        cont = out['continuation']
        pids = prompt_ids if prompt_ids is not None else ids
        sw_ids, gap_s = continuation(w, pids, steps, sw, spec)
        key = (id(w), tuple(pids), steps)
        if key not in ORIGINAL:
            ORIGINAL[key] = continuation(w, pids, steps, (), None)
        or_ids, gap_o = ORIGINAL[key]
        rep.check(cont['prompt_ids'] == list(pids) and cont['swapped']['ids'] == sw_ids and cont['original']['ids'] == or_ids,
                  '%s: greedy continuations equal numpy\'s (%d and %d tokens; smallest top-2 gap %.2e, %.2e)' % (
                      label, len(or_ids), len(sw_ids), gap_o, gap_s))
    return out, ref


def control(rep, out, w, ids, spec, wrong, layers=None, heads=None, must_miss=True):
    """A deliberately wrong convention must miss the CLI's output by a clear margin (> 10 tolerances);
    must_miss=False only prints how far it lands (a convention this input cannot show)."""
    bad = dict(spec, wrong=wrong)
    sw = chosen_heads(w, layers, heads)
    lo = forward(w, ids, (), None)
    ls = forward(w, ids, sw, bad)
    ref = measures(lo, ls, ids, wrong if wrong in ('kl-reversed', 'mean-over-T') else None)
    e, what, _ = compare(out, ref)
    if not must_miss:
        print('info negative control %s (%s): %.3g tolerances: this input cannot tell it apart' % (wrong, spec['name'], e))
        return
    rep.margins.append(('%s %s/%s' % (rep.where, spec['name'], wrong), e))
    rep.check(e > 10, '%s negative control %s (%s): misses by %.3g tolerances (%s)' % (rep.where, wrong, spec['name'], e, what))


# ---------------------------------------------------------------------------------------------------


def tiny(rep, cli):
    rep.where = 'tiny'
    pieces, scores = make_vocab()
    with tempfile.TemporaryDirectory(prefix='attnviz-linearize-') as tmp:
        tok = os.path.join(tmp, 'tok.bin')
        write_tokenizer(tok, pieces, scores)
        rng = np.random.default_rng(34)
        path = os.path.join(tmp, 'tiny.bin')
        write_model(path, rng, shared=False)
        w = load_model(path)
        text = 'the cat at the hat ate the hat and the cat sat'
        ids = encode(text, pieces, scores)
        base = ['--model', path, '--tokenizer', tok, '--text', text]
        om = performer_omega(64, w['hs'], 5)
        specs = [{'name': 'elu'}, {'name': 'relu'}, {'name': 'exp'}, {'name': 'taylor', 'order': 2},
                 {'name': 'cosformer'}, {'name': 'focused', 'p': 3}, {'name': 'hedgehog'},
                 {'name': 'performer', 'm': 64, 'seed': 5, 'omega': om}]
        outs = {}
        for spec in specs:
            for path_ in ('matrix', 'recurrent'):
                out, _ = case(rep, cli, w, base, ids, spec, path=path_, label='tiny %s path=%s' % (spec['name'], path_))
                outs[spec['name'], path_] = out
            a, b = outs[spec['name'], 'matrix'], outs[spec['name'], 'recurrent']
            if a and b:
                d = err_nats(b['texts'][0]['per_position']['loss'], a['texts'][0]['per_position']['loss'])
                rep.check(d <= 1, 'tiny %s: matrix and recurrent paths agree (%.2f tol)' % (spec['name'], d))
        # head choices: GQA (heads 1, 2 read KV heads 0, 1) and the layer/head rules, with continuations
        elu = {'name': 'elu'}
        out_h, _ = case(rep, cli, w, base, ids, elu, heads=[1, 2], steps=6, label='tiny elu --heads 1,2')
        case(rep, cli, w, base, ids, elu, layers=[1], steps=6, label='tiny elu --layers 1')
        case(rep, cli, w, base, ids, elu, layers=[0, 2], heads=[3], path='recurrent', label='tiny elu --layers 0,2 --heads 3')
        out_all, _ = case(rep, cli, w, base, ids, elu, steps=8, label='tiny elu everywhere')
        out_p, _ = case(rep, cli, w, base, ids, specs[-1], steps=8, label='tiny performer m=64 seed=5 everywhere')
        # negative controls on the tiny model
        if out_h:
            control(rep, out_h, w, ids, elu, 'kv-map', heads=[1, 2])
        if out_all:
            control(rep, out_all, w, ids, elu, 'scaled-inputs')
            control(rep, out_all, w, ids, elu, 'kl-reversed')
            control(rep, out_all, w, ids, elu, 'mean-over-T')
        if out_p:
            control(rep, out_p, w, ids, specs[-1], 'no-sqrt-scale')
            control(rep, out_p, w, ids, dict(specs[-1], omega=performer_omega(64, w['hs'], 6)), 'omega-of-seed+1')
        if outs['cosformer', 'matrix']:
            control(rep, outs['cosformer', 'matrix'], w, ids, {'name': 'cosformer', 'seq': w['seq']}, 'n-is-seq_len')
        if outs['focused', 'matrix']:
            control(rep, outs['focused', 'matrix'], w, ids, {'name': 'focused', 'p': 3}, 'eps-not-n')
        # ε in the row normaliser shows only where a row sum is ~1e-6 or less: two more tiny models whose
        # layer-0 q and k at BOS are every entry −20 (elu+1 ≈ 2e-9 each: row 0's sum ~1e-17 ≪ ε, so with ε
        # its output is ~0, without it v_0) and 3e-4 (relu: row 0's sum 7e-7, comparable with ε)
        for name, value in (('elu', -20.0), ('relu', 3e-4)):
            path2 = os.path.join(tmp, 'bos_%s.bin' % name)
            write_model(path2, np.random.default_rng(35), bos_qk=value)
            w2 = load_model(path2)
            base2 = ['--model', path2, '--tokenizer', tok, '--text', text]
            lab = 'tiny, layer-0 q, k at BOS all %g: %s everywhere' % (value, name)
            out_s, _ = case(rep, cli, w2, base2, ids, {'name': name}, label=lab)
            case(rep, cli, w2, base2, ids, {'name': name}, path='recurrent', label=lab + ', recurrent')
            if out_s:
                control(rep, out_s, w2, ids, {'name': name}, 'no-eps')


def matrix_selfcheck(rep, cli, d, hs):
    """The oracle's own variant matrices against `attnviz matrix --causal` on text128's captured heads, so
    that a disagreement below is the swapped pass's and not a convention of this file's (run.py checks the
    other variants on synthetic inputs; Performer with its ω is checked only here)."""
    Q, K = np.load(os.path.join(d, 'text128_q.npy')), np.load(os.path.join(d, 'text128_k.npy'))
    group = Q.shape[1] // K.shape[1]
    om = performer_omega(256, hs, 3)
    specs = [({'name': 'elu'}, []), ({'name': 'relu'}, []), ({'name': 'hedgehog'}, []), ({'name': 'focused'}, []),
             ({'name': 'cosformer'}, []), ({'name': 'performer', 'omega': om}, ['--m', '256', '--seed', '3'])]
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix='attnviz-linearize-') as tmp:
        for l, h in [(0, 1), (1, 3), (2, 6), (4, 0)]:
            q, k = Q[l, h], K[l, h // group]
            np.save(os.path.join(tmp, 'q.npy'), q)
            np.save(os.path.join(tmp, 'k.npy'), k)
            for spec, flags in specs:
                r = subprocess.run([cli, 'matrix', '--variant', spec['name'], '--causal', '--q', os.path.join(tmp, 'q.npy'),
                                    '--k', os.path.join(tmp, 'k.npy'), '-o', os.path.join(tmp, 'M.npy')] + flags,
                                   capture_output=True, text=True)
                if r.returncode:
                    rep.check(False, 'attnviz matrix %s: %s' % (spec['name'], r.stderr.strip()))
                    continue
                R = variant_matrix(spec, q.astype(np.float64), k.astype(np.float64), hs)
                worst = max(worst, float(np.abs(np.load(os.path.join(tmp, 'M.npy')) - R).max() / np.abs(R).max()))
    rep.check(worst < 1e-5, 'self-check: this file\'s elu, relu, hedgehog, focused, cosformer, performer matrices equal '
              '`attnviz matrix --causal` on 4 text128 heads within %.1e (max |ΔM| / max |M|)' % worst)


def stories(rep, cli):
    rep.where = 'stories'
    d = stories_dir()
    if not os.path.isdir(d):
        skipped('linearize_oracle.py: the swapped forward pass of stories260K on text128')
        return
    meta = json.load(open(os.path.join(d, 'text128_tokens.json')))
    model, tok = os.path.join(d, 'stories260K.bin'), os.path.join(d, 'tok512.bin')
    w = load_model(model)
    ids = meta['ids']
    base = ['--model', model, '--tokenizer', tok, '--text', meta['text']]
    ref0 = measures(forward(w, ids), forward(w, ids), ids)
    rep.check(abs(ref0['loss_original'] - LOSS_STORIES) < 5e-5, 'stories260K text128: numpy loss_original %.6f (fact %.4f)' % (
        ref0['loss_original'], LOSS_STORIES))
    out, _ = case(rep, cli, w, base, ids, {'name': 'softmax'}, steps=32, label='stories softmax everywhere (no change)')
    if out:
        rep.check(out['continuation']['prompt_ids'] == ids, 'stories: the prompt ids (the default prompt, the text) are text128\'s')
        # a swapped softmax head is the lab's softmax kernel (float32 gemm, its own exp), not the model's:
        # the same attention to float precision, so the same loss to ~1e-8 nats and a KL of ~1e-13
        dl = abs(out['loss'] - out['loss_original'])
        rep.check(abs(out['loss_original'] - LOSS_STORIES) < 5e-5 and dl < 1e-6 and 0 <= out['kl_mean'] < 1e-10
                  and out['top1_agreement'] == 1, 'stories softmax: loss_original %.7f, |loss − loss_original| %.1e, '
                  'kl_mean %.1e, top1 %g' % (out['loss_original'], dl, out['kl_mean'], out['top1_agreement']))
    matrix_selfcheck(rep, cli, d, w['hs'])
    elu = {'name': 'elu'}
    out_l, _ = case(rep, cli, w, base, ids, elu, layers=[2], steps=32, label='stories elu --layers 2')
    out_a, _ = case(rep, cli, w, base, ids, elu, steps=32, label='stories elu everywhere')
    case(rep, cli, w, base, ids, elu, path='recurrent', label='stories elu everywhere, recurrent')
    case(rep, cli, w, base, ids, elu, heads=[0, 5], label='stories elu --heads 0,5')
    case(rep, cli, w, base, ids, elu, layers=[1, 3], heads=[2, 7], label='stories elu --layers 1,3 --heads 2,7')
    om = performer_omega(256, w['hs'], 3)
    lib = library_omega(256, w['hs'], 3)
    if lib is None:
        print('note: node or build/wasm/attnviz.wasm absent: ω from the documented stream only, not compared with the library\'s')
    else:
        e = float(np.abs(lib - om).max())
        rep.check(e == 0, 'performer ω (256×8, seed 3) from the documented stream equals the library\'s (max diff %.1e)' % e)
    perf = {'name': 'performer', 'm': 256, 'seed': 3, 'omega': om}
    out_p, _ = case(rep, cli, w, base, ids, perf, steps=32, label='stories performer m=256 seed=3 everywhere')
    case(rep, cli, w, base, ids, perf, path='recurrent', label='stories performer everywhere, recurrent')
    case(rep, cli, w, base, ids, {'name': 'hedgehog'}, heads=[1, 4], label='stories hedgehog (identity W) --heads 1,4')
    if out_l:
        control(rep, out_l, w, ids, elu, 'kv-map', layers=[2])
        # elu+1's row sums on stories260K are ~t·d ≫ 1e-6, so ε moves the loss by ~1e-9 nats here: the
        # sharp tiny model above is where its absence shows
        control(rep, out_l, w, ids, elu, 'no-eps', layers=[2], must_miss=False)
    if out_a:
        control(rep, out_a, w, ids, elu, 'scaled-inputs')
        control(rep, out_a, w, ids, elu, 'kl-reversed')
        control(rep, out_a, w, ids, elu, 'mean-over-T')
    if out_p:
        control(rep, out_p, w, ids, perf, 'keys-per-row')
        control(rep, out_p, w, ids, dict(perf, omega=performer_omega(256, w['hs'], 4)), 'omega-of-seed+1')


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    cli = os.path.abspath(sys.argv[1])
    rep = Report()
    tiny(rep, cli)
    stories(rep, cli)
    worst = ', '.join('%s %.2f' % kv for kv in sorted(rep.worst.items()))
    margins = ', '.join('%s %.3g' % m for m in rep.margins)
    print('worst errors (units of tolerance %.0e nats + %.0e relative): %s' % (TOL_NATS, TOL_REL, worst))
    print('worst per-position |Δ| (loss, loss_original, KL) against numpy: %.2e nats' % rep.worst_abs)
    print('negative-control margins (tolerances missed by): %s' % margins)
    print('%d passed, %d failed (%d checks)' % (rep.passed, rep.failed, rep.passed + rep.failed))
    return 1 if rep.failed else 0


if __name__ == '__main__':
    sys.exit(main())
