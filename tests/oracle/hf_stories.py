#!/usr/bin/python3
"""stories260K as a Hugging Face Llama folder: the legacy path and the Hugging Face path must agree.

Converts $ATTNVIZ_SHARED/data/stories260K/stories260K.bin into a folder as llama2.c's export.py
(hf_export) and transformers' convert_llama_weights_to_hf.py do it: the q and k rows permuted per head
so that rotate-half RoPE on the pairs (j, j + hs/2) is llama2.c's RoPE on the pairs (2i, 2i+1)
(row 2i + c of a head goes to c·hs/2 + i), every other weight as it is, float32, config.json with
rms_norm_eps 1e-5, rope_theta 10000 and tie_word_embeddings as the file's vocab sign says (tied: no
lm_head.weight, as save_pretrained writes it). Then, on text128 (128 ids with BOS):
  attnviz capture --model stories260K.bin --tokenizer tok512.bin --text TEXT -o A
  attnviz capture --model DIR --ids <A's ids> --logits -o B
and checks V equal, Q and K equal once the permutation is undone (within TOL relative to each tensor's
max), B's logits against the independent numpy pass of hf_oracle.py on the converted folder, the mean
next-token loss from B's logits against the shared data's fact and `attnviz linearize`'s loss_original (on
the checkpoint and on the folder),
and B's last argmax against the fact. The folder also gets tok512 as a Llama-2 tokenizer.json (as
transformers' LlamaConverter writes one; its BPE is checked here against llama2.c's encoder), and
`capture --model DIR --text TEXT` must give text128's ids. Skips with a message when the shared data is absent.
Usage: hf_stories.py path/to/attnviz
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_oracle  # noqa: E402
from model_oracle import encode as encode_legacy  # noqa: E402  (llama2.c's encoder, written from run.c)
from shared_data import skipped, stories_dir  # noqa: E402

TOL = 1e-5        # the same float32 weights on two paths: only summation order differs
TOL_NATS = 2e-5   # the mean loss, absolute (as linearize_oracle.py)


def read_legacy(path):
    data = open(path, 'rb').read()
    dim, hidden, layers, heads, kv_heads, vocab, seq = struct.unpack('<7i', data[:28])
    shared, vocab = vocab > 0, abs(vocab)
    hs = dim // heads
    kvd = kv_heads * hs
    f = np.frombuffer(data, '<f4', offset=28)
    w, at = {}, 0
    for name, shape in [('tok_emb', (vocab, dim)), ('rms_att', (layers, dim)), ('wq', (layers, dim, dim)),
                        ('wk', (layers, kvd, dim)), ('wv', (layers, kvd, dim)), ('wo', (layers, dim, dim)),
                        ('rms_ffn', (layers, dim)), ('w1', (layers, hidden, dim)), ('w2', (layers, dim, hidden)),
                        ('w3', (layers, hidden, dim)), ('rms_final', (dim,)), ('freq', (2, seq, hs // 2))]:
        size = int(np.prod(shape))
        w[name] = f[at:at + size].reshape(shape)
        at += size
    if not shared:
        w['wcls'] = f[at:at + vocab * dim].reshape(vocab, dim)
        at += vocab * dim
    assert at == len(f), 'stories260K.bin: unexpected length'
    return dict(dim=dim, hidden=hidden, layers=layers, heads=heads, kv_heads=kv_heads, vocab=vocab, seq=seq,
                shared=shared, hs=hs), w


def permute(w, n_heads):
    """export.py's permute_original: (rows, cols) viewed (heads, hs/2, 2, cols), axes 1 and 2 swapped."""
    rows, cols = w.shape
    return w.reshape(n_heads, rows // n_heads // 2, 2, cols).transpose(0, 2, 1, 3).reshape(rows, cols)


def to_hf(h, w):
    """(config.json dict, safetensors entries) of the converted model, float32."""
    t = [('model.embed_tokens.weight', w['tok_emb'])]
    for l in range(h['layers']):
        p = 'model.layers.%d.' % l
        t += [(p + 'input_layernorm.weight', w['rms_att'][l]),
              (p + 'self_attn.q_proj.weight', permute(w['wq'][l], h['heads'])),
              (p + 'self_attn.k_proj.weight', permute(w['wk'][l], h['kv_heads'])),
              (p + 'self_attn.v_proj.weight', w['wv'][l]),
              (p + 'self_attn.o_proj.weight', w['wo'][l]),
              (p + 'post_attention_layernorm.weight', w['rms_ffn'][l]),
              (p + 'mlp.gate_proj.weight', w['w1'][l]),
              (p + 'mlp.down_proj.weight', w['w2'][l]),
              (p + 'mlp.up_proj.weight', w['w3'][l])]
    t.append(('model.norm.weight', w['rms_final']))
    if not h['shared']:
        t.append(('lm_head.weight', w['wcls']))
    entries = [(name, 'F32', a.shape, np.ascontiguousarray(a, '<f4').tobytes()) for name, a in t]
    config = {   # LlamaConfig(...).to_dict() as export.py writes it, with the library's defaults
        'architectures': ['LlamaForCausalLM'], 'model_type': 'llama', 'vocab_size': h['vocab'],
        'hidden_size': h['dim'], 'intermediate_size': h['hidden'], 'num_hidden_layers': h['layers'],
        'num_attention_heads': h['heads'], 'num_key_value_heads': h['kv_heads'], 'head_dim': h['hs'],
        'max_position_embeddings': h['seq'], 'rms_norm_eps': 1e-5, 'rope_theta': 10000.0, 'rope_scaling': None,
        'tie_word_embeddings': h['shared'], 'hidden_act': 'silu', 'attention_bias': False, 'mlp_bias': False,
        'attention_dropout': 0.0, 'bos_token_id': 1, 'eos_token_id': 2, 'initializer_range': 0.02,
        'pretraining_tp': 1, 'use_cache': True, 'torch_dtype': 'float32', 'transformers_version': '4.46.0'}
    return config, entries, dict(t)


def read_tok(path):
    """llama2.c's tokenizer: int32 max_token_length, then per piece float32 score, int32 length, bytes."""
    d, at, pieces = open(path, 'rb').read(), 4, []
    while at < len(d):
        score, n = struct.unpack('<fi', d[at:at + 8])
        pieces.append((d[at + 8:at + 8 + n], score))
        at += 8 + n
    return pieces


def to_tokenizer_json(tok):
    """(tokenizer.json dict, encode function) as transformers' LlamaConverter writes a Llama-2 tokenizer:
    pieces with '▁' for llama2.c's ' ' (its export replaced them), <unk> <s> </s> as ids 0-2; BPE merges
    from the vocabulary, every split of a piece into two pieces, ordered by the piece's score (descending),
    ties by the halves' ids; byte fallback; the legacy normalizer (Prepend '▁', spaces to '▁'); BOS by
    the post-processor."""
    pieces = ['<unk>', '<s>', '</s>'] + [p.decode('utf-8').replace(' ', '\u2581') for p, _ in tok[3:]]
    scores = [0.0, 0.0, 0.0] + [s for _, s in tok[3:]]
    vocab = {p: i for i, p in enumerate(pieces)}
    merges = []
    for piece, score in zip(pieces, scores):
        local = [(piece[:k], piece[k:], score) for k in range(1, len(piece)) if piece[:k] in vocab and piece[k:] in vocab]
        merges += sorted(local, key=lambda m: (vocab[m[0]], vocab[m[1]]))
    merges.sort(key=lambda m: m[2], reverse=True)   # stable: ties keep the order above
    rank = {(a, b): r for r, (a, b, _) in enumerate(merges)}

    def encode(text):
        """The BPE model as the tokenizers library runs it: characters (unknown ones as <0xHH> bytes), then
        repeatedly the adjacent pair of lowest merge rank, leftmost first; BOS first."""
        toks = []
        for ch in ('\u2581' + text.replace(' ', '\u2581')) if text else '':
            toks += [ch] if ch in vocab else ['<0x%02X>' % b for b in ch.encode()]
        while True:
            best = min(((rank[p], i) for i, p in enumerate(zip(toks, toks[1:])) if p in rank), default=None)
            if best is None:
                return [1] + [vocab[t] for t in toks]
            i = best[1]
            toks[i:i + 2] = [toks[i] + toks[i + 1]]

    special = [{'id': i, 'content': c, 'single_word': False, 'lstrip': False, 'rstrip': False, 'normalized': False,
                'special': True} for i, c in enumerate(['<unk>', '<s>', '</s>'])]
    spm = '\u2581'
    js = {
        'version': '1.0', 'truncation': None, 'padding': None, 'added_tokens': special,
        'normalizer': {'type': 'Sequence', 'normalizers': [
            {'type': 'Prepend', 'prepend': spm}, {'type': 'Replace', 'pattern': {'String': ' '}, 'content': spm}]},
        'pre_tokenizer': None,
        'post_processor': {
            'type': 'TemplateProcessing',
            'single': [{'SpecialToken': {'id': '<s>', 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}}],
            'pair': [{'SpecialToken': {'id': '<s>', 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}},
                     {'SpecialToken': {'id': '<s>', 'type_id': 1}}, {'Sequence': {'id': 'B', 'type_id': 1}}],
            'special_tokens': {'<s>': {'id': '<s>', 'ids': [1], 'tokens': ['<s>']}}},
        'decoder': {'type': 'Sequence', 'decoders': [
            {'type': 'Replace', 'pattern': {'String': spm}, 'content': ' '}, {'type': 'ByteFallback'},
            {'type': 'Fuse'}, {'type': 'Strip', 'content': ' ', 'start': 1, 'stop': 0}]},
        'model': {'type': 'BPE', 'dropout': None, 'unk_token': '<unk>', 'continuing_subword_prefix': None,
                  'end_of_word_suffix': None, 'fuse_unk': True, 'byte_fallback': True, 'ignore_merges': False,
                  'vocab': vocab, 'merges': ['%s %s' % (a, b) for a, b, _ in merges]}}
    return js, encode


def nll(logits, ids):
    """The mean next-token cross-entropy (nats) of positions 0..n-2 predicting ids[1..]."""
    z = logits - logits.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    return float(-np.mean(logp[np.arange(len(ids) - 1), ids[1:]]))


def main():
    cli = sys.argv[1]
    sd = stories_dir()
    if not os.path.isdir(sd):
        skipped('oracle hf_stories.py: stories260K as a Hugging Face folder')
        return
    failed = passed = 0

    def check(ok, what):
        nonlocal failed, passed
        passed += bool(ok)
        failed += not ok
        print(('ok   ' if ok else 'FAIL ') + what, flush=True)

    model, tok = os.path.join(sd, 'stories260K.bin'), os.path.join(sd, 'tok512.bin')
    fact = json.load(open(os.path.join(sd, 'text128_tokens.json')))
    h, w = read_legacy(model)
    config, entries, named = to_hf(h, w)
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, 'stories260K-hf')
        hf_oracle.write_folder(folder, config, entries)
        tj, hf_encode = to_tokenizer_json(read_tok(tok))
        with open(os.path.join(folder, 'tokenizer.json'), 'w', encoding='utf-8') as f:
            json.dump(tj, f, ensure_ascii=False, indent=2)
        # the conversion itself: the BPE of tokenizer.json against llama2.c's encoder (model_oracle.py's)
        legacy = [(p.decode('utf-8', 'replace'), sc) for p, sc in read_tok(tok)]
        texts = [fact['text'], 'héllo wörld ☃ 𝄞', '  two  spaces ', 'a\nb', 'The end.', '']
        same = [hf_encode(t) == encode_legacy(t, [p for p, _ in legacy], [sc for _, sc in legacy]) for t in texts]
        check(all(same) and hf_encode(fact['text']) == fact['ids'],
              'tokenizer.json (%d merges): its BPE gives llama2.c\'s ids on %d of %d texts, text128\'s exactly'
              % (len(tj['model']['merges']), sum(same), len(texts)))
        a, b = os.path.join(tmp, 'a'), os.path.join(tmp, 'b')
        r = subprocess.run([cli, 'capture', '--model', model, '--tokenizer', tok, '--text', fact['text'], '-o', a],
                           capture_output=True, text=True)
        if r.returncode:
            check(False, 'llama2.c capture: exit %d: %s' % (r.returncode, r.stderr.strip()))
            print('%d passed, %d failed' % (passed, failed))
            sys.exit(1)
        ids = json.load(open(os.path.join(a, 'tokens.json')))['ids']
        check(ids == fact['ids'], 'llama2.c capture: the %d ids of text128' % len(ids))
        # the independent numpy pass on the converted folder's weights
        hs = h['hs']
        m = {'arch': 'llama', 'w': {k: v.astype(np.float64) for k, v in named.items()},
             'cfg': {'dim': h['dim'], 'layers': h['layers'], 'heads': h['heads'], 'kv_heads': h['kv_heads'], 'hs': hs,
                     'vocab': h['vocab'], 'eps': 1e-5, 'theta': 10000.0, 'rope_scaling': None, 'tied': h['shared'],
                     'qk_norm': False, 'window': None}}
        Q, K, V, L = hf_oracle.forward(m, ids)
        # HF element j of a head is llama2.c's element 2(j mod hs/2) + j div (hs/2)
        perm = np.array([2 * (j % (hs // 2)) + j // (hs // 2) for j in range(hs)])
        A = {f: np.load(os.path.join(a, f + '.npy')).astype(np.float64) for f in 'qkv'}
        errs = [hf_oracle.rel(A['q'][..., perm], Q), hf_oracle.rel(A['k'][..., perm], K), hf_oracle.rel(A['v'], V)]
        check(max(errs) <= hf_oracle.TOL, 'the conversion: numpy\'s HF pass on the folder against the legacy capture: '
              'q %.1e k %.1e v %.1e (TOL %.0e)' % (*errs, hf_oracle.TOL))
        check(abs(nll(L, ids) - fact['mean_next_token_nll_nats']) < 1e-3, 'the conversion: numpy\'s loss %.5f, the '
              'shared fact %.4f' % (nll(L, ids), fact['mean_next_token_nll_nats']))
        r = subprocess.run([cli, 'capture', '--model', folder, '--ids', ','.join(map(str, ids)), '--logits', '-o', b],
                           capture_output=True, text=True)
        if r.returncode:
            check(False, 'Hugging Face folder capture: exit %d: %s' % (r.returncode, (r.stderr.strip().splitlines() or [''])[0]))
            print('%d passed, %d failed' % (passed, failed))
            sys.exit(1)
        B = {f: np.load(os.path.join(b, f + '.npy')).astype(np.float64) for f in ('q', 'k', 'v', 'logits')}
        check(json.load(open(os.path.join(b, 'tokens.json')))['ids'] == ids, 'folder capture: the same ids, no BOS added')
        shapes_ok = all(A[f].shape == B[f].shape for f in 'qkv')
        check(shapes_ok, 'shapes: q %s, k %s, v %s' % (B['q'].shape, B['k'].shape, B['v'].shape))
        if shapes_ok:
            ev = hf_oracle.rel(B['v'], A['v'])
            eq, ek = hf_oracle.rel(B['q'], A['q'][..., perm]), hf_oracle.rel(B['k'], A['k'][..., perm])
            check(max(ev, eq, ek) <= TOL, 'V %.1e, Q %.1e, K %.1e (un-permuted) of the legacy capture (TOL %.0e)'
                  % (ev, eq, ek, TOL))
            errs = [hf_oracle.rel(B['q'], Q), hf_oracle.rel(B['k'], K), hf_oracle.rel(B['v'], V),
                    hf_oracle.rel(B['logits'], L)]
            check(max(errs) <= hf_oracle.TOL, 'the numpy HF pass on the folder: q %.1e k %.1e v %.1e logits %.1e (TOL '
                  '%.0e)' % (*errs, hf_oracle.TOL))
            # negative control: without undoing the permutation Q misses by far
            miss = hf_oracle.rel(B['q'], A['q'])
            check(miss > 100 * TOL, 'control: Q compared without undoing the permutation misses by %.1e = %.0f x TOL'
                  % (miss, miss / TOL))
        lg = B['logits']
        loss = nll(lg, ids)
        check(abs(loss - fact['mean_next_token_nll_nats']) < 1e-3,
              'loss from logits.npy %.5f, the shared fact %.4f' % (loss, fact['mean_next_token_nll_nats']))
        check(int(np.argmax(lg[-1])) == fact['next_token_argmax_after_last'],
              'argmax after the last token %d (fact %d)' % (int(np.argmax(lg[-1])), fact['next_token_argmax_after_last']))
        # the folder's own tokenizer.json: capture --model DIR --text (BOS from its post-processor)
        c = os.path.join(tmp, 'c')
        r = subprocess.run([cli, 'capture', '--model', folder, '--text', fact['text'], '-o', c], capture_output=True, text=True)
        how = '--model DIR --text'
        if r.returncode and '--tokenizer' in r.stderr:
            how += ' --tokenizer DIR/tokenizer.json'
            r = subprocess.run([cli, 'capture', '--model', folder, '--tokenizer', os.path.join(folder, 'tokenizer.json'),
                                '--text', fact['text'], '-o', c], capture_output=True, text=True)
        if r.returncode:
            check(False, 'capture %s: exit %d: %s' % (how, r.returncode, (r.stderr.strip().splitlines() or [''])[0]))
        else:
            cids = json.load(open(os.path.join(c, 'tokens.json')))['ids']
            same_q = cids == ids and np.array_equal(np.load(os.path.join(c, 'q.npy')), np.load(os.path.join(b, 'q.npy')))
            check(same_q, 'capture %s: the %d ids of text128 (BOS added), Q as with --ids' % (how, len(cids)))
        r = subprocess.run([cli, 'linearize', '--model', model, '--tokenizer', tok, '--text', fact['text'],
                            '--variant', 'softmax', '--steps', '0'], capture_output=True, text=True)
        if r.returncode == 0:
            lo = json.loads(r.stdout)['loss_original']
            check(abs(loss - lo) < TOL_NATS, 'loss %.6f against linearize loss_original %.6f (|diff| %.1e)' % (loss, lo, abs(loss - lo)))
        else:
            check(False, 'linearize: exit %d: %s' % (r.returncode, r.stderr.strip()))
        # and linearize on the folder (its tokenizer.json): the same loss
        r = subprocess.run([cli, 'linearize', '--model', folder, '--text', fact['text'], '--variant', 'softmax',
                            '--steps', '0'], capture_output=True, text=True)
        if r.returncode == 0:
            lo = json.loads(r.stdout)['loss_original']
            check(abs(loss - lo) < TOL_NATS, 'linearize --model DIR: loss_original %.6f (|diff| %.1e)' % (lo, abs(loss - lo)))
        else:
            check(False, 'linearize --model DIR: exit %d: %s' % (r.returncode, (r.stderr.strip().splitlines() or [''])[0]))
    print('%d passed, %d failed' % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
