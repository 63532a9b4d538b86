"""An independent numpy forward pass and encoder for llama2.c checkpoints, against `attnviz capture`.

It writes a tiny checkpoint in llama2.c's legacy format (random weights, a few KB; shared and unshared
classifiers) and a tokenizer (byte pieces, letters, a space and merges with scores), runs the CLI's
capture on a few texts, and checks the ids against encode() below and Q, K, V against forward() below,
both written from the format and llama2.c's run.c description (docs/model.md), not from src/model.c.
When ../shared/data/stories260K is present it also checks the real model against its captured tensors.
Usage: model_oracle.py path/to/attnviz"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

from shared_data import skipped, stories_dir

DIM, HID, LAYERS, HEADS, KV_HEADS, SEQ = 16, 40, 2, 4, 2, 32
HS = DIM // HEADS
KV_DIM = HS * KV_HEADS


def write_model(path, vocab, shared, rng):
    w = {
        'tok_emb': rng.normal(0, 0.5, (vocab, DIM)),
        'rms_att': 1 + 0.1 * rng.normal(size=(LAYERS, DIM)),
        'wq': rng.normal(0, 0.3, (LAYERS, DIM, DIM)), 'wk': rng.normal(0, 0.3, (LAYERS, KV_DIM, DIM)),
        'wv': rng.normal(0, 0.3, (LAYERS, KV_DIM, DIM)), 'wo': rng.normal(0, 0.3, (LAYERS, DIM, DIM)),
        'rms_ffn': 1 + 0.1 * rng.normal(size=(LAYERS, DIM)),
        'w1': rng.normal(0, 0.3, (LAYERS, HID, DIM)), 'w2': rng.normal(0, 0.3, (LAYERS, DIM, HID)),
        'w3': rng.normal(0, 0.3, (LAYERS, HID, DIM)), 'rms_final': 1 + 0.1 * rng.normal(size=DIM),
        'freq': rng.normal(size=(2, SEQ, HS // 2)),   # legacy RoPE tables: present, never read
        'wcls': rng.normal(0, 0.5, (vocab, DIM)),
    }
    w = {k: v.astype(np.float32) for k, v in w.items()}
    with open(path, 'wb') as f:
        f.write(struct.pack('<7i', DIM, HID, LAYERS, HEADS, KV_HEADS, vocab if shared else -vocab, SEQ))
        for k in ['tok_emb', 'rms_att', 'wq', 'wk', 'wv', 'wo', 'rms_ffn', 'w1', 'w2', 'w3', 'rms_final', 'freq']:
            f.write(w[k].tobytes())
        if not shared:
            f.write(w['wcls'].tobytes())
    if shared:
        w['wcls'] = w['tok_emb']
    return w


def make_vocab():
    pieces = ['<unk>', '\n<s>\n', '\n</s>\n'] + ['<0x%02X>' % b for b in range(256)]
    words = [' ', 'e', 't', 'a', 'h', 'o', 'n', 's', ' t', 'th', ' th', 'he', ' the', 'at', ' a', 'an', ' an', 'é', 'ca', 'at ']
    pieces += words
    scores = [0.0] * 259 + [float(i) * 0.5 - 3 for i in range(len(words))]
    return pieces, scores


def write_tokenizer(path, pieces, scores):
    with open(path, 'wb') as f:
        f.write(struct.pack('<i', max(len(p.encode()) for p in pieces)))
        for p, s in zip(pieces, scores):
            b = p.encode()
            f.write(struct.pack('<fi', s, len(b)))
            f.write(b)


def encode(text, pieces, scores):
    """llama2.c's encode: BOS, a space piece, each UTF-8 character's piece or its bytes + 3, greedy merges."""
    ids_of = {p.encode(): i for i, p in enumerate(pieces)}
    ids = [1]
    if text:
        ids.append(ids_of[b' '])
    for ch in text:
        b = ch.encode()
        if b in ids_of:
            ids.append(ids_of[b])
        else:
            ids += [c + 3 for c in b]
    raw = [p.encode() for p in pieces]
    while True:
        best, at = None, -1
        for i in range(len(ids) - 1):
            j = ids_of.get(raw[ids[i]] + raw[ids[i + 1]])
            if j is not None and (best is None or scores[j] > scores[best]):
                best, at = j, i
        if best is None:
            return ids
        ids[at:at + 2] = [best]


def rmsnorm(x, w):
    return w * (x / np.sqrt(np.mean(x * x) + 1e-5))


def rope(v, pos):
    """Rotate interleaved pairs (2i, 2i+1) of each head by pos·10000^(−2i/HS)."""
    out = v.copy()
    for j in range(0, len(v), 2):
        a = pos * 10000.0 ** (-(j % HS) / HS)
        out[j] = v[j] * np.cos(a) - v[j + 1] * np.sin(a)
        out[j + 1] = v[j] * np.sin(a) + v[j + 1] * np.cos(a)
    return out


def forward(w, ids):
    """Q (layers, heads, n, HS) after RoPE, K and V (layers, kv_heads, n, HS), and the last logits."""
    n = len(ids)
    f = {k: v.astype(np.float64) for k, v in w.items()}
    Q, K, V = np.zeros((LAYERS, HEADS, n, HS)), np.zeros((LAYERS, KV_HEADS, n, HS)), np.zeros((LAYERS, KV_HEADS, n, HS))
    x = f['tok_emb'][ids].copy()                       # all positions at once, layer by layer
    for layer in range(LAYERS):
        xb = np.stack([rmsnorm(r, f['rms_att'][layer]) for r in x])
        q, k, v = xb @ f['wq'][layer].T, xb @ f['wk'][layer].T, xb @ f['wv'][layer].T
        q = np.stack([rope(q[t], t) for t in range(n)])
        k = np.stack([rope(k[t], t) for t in range(n)])
        Q[layer] = q.reshape(n, HEADS, HS).transpose(1, 0, 2)
        K[layer] = k.reshape(n, KV_HEADS, HS).transpose(1, 0, 2)
        V[layer] = v.reshape(n, KV_HEADS, HS).transpose(1, 0, 2)
        out = np.zeros((n, DIM))
        for h in range(HEADS):
            kh = h // (HEADS // KV_HEADS)
            S = Q[layer, h] @ K[layer, kh].T / np.sqrt(HS)
            S = np.where(np.tril(np.ones((n, n), dtype=bool)), S, -np.inf)
            A = np.exp(S - S.max(1, keepdims=True))
            A /= A.sum(1, keepdims=True)
            out[:, h * HS:(h + 1) * HS] = A @ V[layer, kh]
        x = x + out @ f['wo'][layer].T
        xb = np.stack([rmsnorm(r, f['rms_ffn'][layer]) for r in x])
        h1, h3 = xb @ f['w1'][layer].T, xb @ f['w3'][layer].T
        x = x + (h1 / (1 + np.exp(-h1)) * h3) @ f['w2'][layer].T
    return Q, K, V, rmsnorm(x[-1], f['rms_final']) @ f['wcls'].T


def main():
    cli = sys.argv[1]
    failed = passed = 0

    def check(ok, what):
        nonlocal failed, passed
        passed += ok
        failed += not ok
        print(('ok   ' if ok else 'FAIL ') + what)

    pieces, scores = make_vocab()
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as tmp:
        tok = os.path.join(tmp, 'tok.bin')
        write_tokenizer(tok, pieces, scores)
        for shared in (True, False):
            model = os.path.join(tmp, 'model%d.bin' % shared)
            w = write_model(model, len(pieces), shared, rng)
            for text in ['the cat at the hat', 'an éa ü!', 'a', '', 'the ' * 7]:
                out = os.path.join(tmp, 'cap')
                r = subprocess.run([cli, 'capture', '--model', model, '--tokenizer', tok, '--text', text, '-o', out],
                                   capture_output=True, text=True)
                if r.returncode:
                    check(False, 'capture %r: %s' % (text, r.stderr.strip()))
                    continue
                got = json.load(open(os.path.join(out, 'tokens.json')))
                ids = encode(text, pieces, scores)
                check(got['ids'] == ids, 'shared=%s %r: ids %s' % (shared, text, got['ids']))
                Q, K, V, _ = forward(w, ids)
                err = max(float(np.abs(np.load(os.path.join(out, f + '.npy')) - ref).max())
                          for f, ref in (('q', Q), ('k', K), ('v', V)))
                check(err < 1e-4, 'shared=%s %r: Q, K, V within %.1e of numpy' % (shared, text, err))
            # the greedy continuation of the CLI against numpy's argmax, 6 steps from "the"
            r = subprocess.run([cli, 'generate-text', '--model', model, '--tokenizer', tok, '--text', 'the', '--steps', '6'],
                               capture_output=True)
            ids = encode('the', pieces, scores)
            for _ in range(6):
                nxt = int(np.argmax(forward(w, ids)[3]))
                if nxt == 1:
                    break
                ids.append(nxt)
            # the pieces' bytes as llama2.c prints them: a byte piece is its byte, the space after BOS dropped
            want = b''.join(bytes([int(pieces[i][3:5], 16)]) if pieces[i].startswith('<0x') else pieces[i].encode() for i in ids[1:])
            want = (want[1:] if want.startswith(b' ') else want) + b'\n'
            check(r.returncode == 0 and r.stdout == want, 'shared=%s generate-text: %r (numpy %r)' % (shared, r.stdout, want))
        # readouts --all-heads: every layer and head, each the object of readouts --layer L --head H
        cap = os.path.join(tmp, 'cap')
        subprocess.run([cli, 'capture', '--model', os.path.join(tmp, 'model1.bin'), '--tokenizer', tok, '--text', 'the cat at the hat',
                        '-o', cap], check=True)
        common = ['--variant', 'elu', '--causal', '--q', os.path.join(cap, 'q.npy'), '--k', os.path.join(cap, 'k.npy'),
                  '--v', os.path.join(cap, 'v.npy')]
        every = json.loads(subprocess.run([cli, 'readouts', '--all-heads'] + common, capture_output=True, text=True, check=True).stdout)
        shape_ok = (every['layers'], every['heads'], every['kv_heads'], every['n']) == (LAYERS, HEADS, KV_HEADS, 11) and \
            [len(r) for r in every['readouts']] == [HEADS] * LAYERS
        same = all(json.loads(subprocess.run([cli, 'readouts'] + common + ['--layer', str(l), '--head', str(h)], capture_output=True,
                                             text=True, check=True).stdout) == every['readouts'][l][h] for l, h in [(0, 0), (1, 3), (0, 2)])
        check(shape_ok and same, 'readouts --all-heads: %d x %d objects, each the single head\'s' % (every['layers'], every['heads']))
        r = subprocess.run([cli, 'readouts', '--all-heads', '--layer', '0'] + common, capture_output=True, text=True)
        check(r.returncode == 2 and 'drop --layer' in r.stderr, 'readouts --all-heads with --layer: %s' % r.stderr.strip())
        # hostile inputs: a clear line and exit status 2
        model = os.path.join(tmp, 'model1.bin')
        data = open(model, 'rb').read()
        bad = os.path.join(tmp, 'bad.bin')
        for name, blob in [('truncated', data[:-5]), ('header', b'\0' * 28 + data[28:]), ('short', data[:10])]:
            open(bad, 'wb').write(blob)
            r = subprocess.run([cli, 'capture', '--model', bad, '--tokenizer', tok, '--text', 'a', '-o', os.path.join(tmp, 'x')],
                               capture_output=True, text=True)
            check(r.returncode == 2 and r.stderr.startswith('attnviz: --model') and not os.path.exists(os.path.join(tmp, 'x')),
                  'a %s checkpoint: exit %d, %s' % (name, r.returncode, r.stderr.strip()))
        r = subprocess.run([cli, 'capture', '--model', model, '--tokenizer', tok, '--text', 'a' * 40, '-o', os.path.join(tmp, 'x')],
                           capture_output=True, text=True)
        check(r.returncode == 2 and 'seq_len 32' in r.stderr, 'text longer than seq_len: %s' % r.stderr.strip())

    shared_dir = stories_dir()
    if os.path.isdir(shared_dir):
        meta = json.load(open(os.path.join(shared_dir, 'text128_tokens.json')))
        with tempfile.TemporaryDirectory() as tmp:
            r = subprocess.run([cli, 'capture', '--model', os.path.join(shared_dir, 'stories260K.bin'), '--tokenizer',
                                os.path.join(shared_dir, 'tok512.bin'), '--text', meta['text'], '-o', tmp], capture_output=True, text=True)
            got = json.load(open(os.path.join(tmp, 'tokens.json')))
            check(got['ids'] == meta['ids'] and got['pieces'] == meta['pieces'], 'stories260K text128: ids and pieces')
            err = max(float(np.abs(np.load(os.path.join(tmp, f + '.npy')) - np.load(os.path.join(shared_dir, 'text128_%s.npy' % f))).max())
                      for f in 'qkv')
            check(err < 1e-4, 'stories260K text128: Q, K, V within %.1e of the captured tensors' % err)
    else:
        skipped('oracle model_oracle.py: capture of stories260K text128 against its tensors')
    print('%d passed, %d failed' % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
