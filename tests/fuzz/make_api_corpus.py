#!/usr/bin/env python3
"""make_api_corpus.py: writes the seed corpus of tests/fuzz/fuzz_api.c (standard library only).

    python3 tests/fuzz/make_api_corpus.py [DIR]      (default tests/fuzz/corpus_api; the files are committed)

One seed per variant, non-causal and causal, on av_generate's data (each generator in turn), with the
default knobs, exact workspaces and every call; and a few hostile ones (all entries 1e30, denormal keys
against huge queries, NaN and Inf entries, short and NULL workspaces, knobs at and past their ranges).
The bytes follow the decoder of fuzz_api.c (LLVMFuzzerTestOneInput, rd_fill, rd_f64); the bytes after the
inputs (per-call choices) are left out, and the reader gives 0 for them: exact workspaces, defaults.
The i27_* seeds run the calls added in issue 27 alone (the recurrent and chunkwise forms, path costs, random
matrices, the semiseparable rank, recall, distillation, .npy, a real model with byte pieces and merges),
with exactly the choices they read, so that each reaches its checks (encoded ids through av_forward twice,
a header parsed back and decoded, two distillation steps against two calls of one).
"""
import os
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_api")
VARIANTS = 13

# indices into fuzz_api.c's special_f32 table
SPECIAL = {"0": 0, "1": 2, "1e30": 6, "-1e30": 7, "1e33": 8, "1e-40": 10, "FLT_MAX": 14, "89": 20, "nan": 32, "inf": 37}
# rd_f64's first byte: c < 64 means the integer c - 8
def small(v):
    return bytes([v + 8])


def fill_generated(gen, std_exp=None, seed=0, overrides=()):
    """rd_fill mode 2 (std 1) or 3 (std 10^(std_exp - 6)) with overrides (index, special name)."""
    b = bytes([2, gen, seed]) if std_exp is None else bytes([3, std_exp, gen, seed])
    return b + fill_overrides(overrides)


def fill_const(name, overrides=()):
    """rd_fill mode 1: every entry one special value (rd_f32 byte 96 + index)."""
    return bytes([1, 96 + SPECIAL[name]]) + fill_overrides(overrides)


def fill_overrides(overrides):
    b = bytes([len(overrides)])
    for i, name in overrides:
        b += bytes([i & 255, i >> 8, SPECIAL[name]])
    return b


def seed(variant, causal, n, d, dv, q, k, v, knobs=(), ops=0x1FFF):
    """ops: the calls to run (fuzz_api.c's OP_* bits; 0x1fff = OP_DEFAULT, every call); knobs: (id, rd_f64 bytes)."""
    x = ops ^ 0x1FFF
    b = bytes([x & 255, x >> 8, 0, n - 1, d - 1, dv - 1, variant, 0, causal, len(knobs)])
    for knob, value in knobs:
        b += bytes([knob + 1]) + value  # rd_range(-1, AV_KNOB_COUNT): byte = knob + 1
    b += bytes([0, 0])  # no raw poke, no Hedgehog weights
    return b + q + k + v


OP2 = {"forms": 1, "costs": 2, "random": 4, "semisep": 8, "recall": 16, "distill": 32, "npy": 64, "model": 128}
OP_MATRIX = 2


def new_calls(variant, causal, n, d, dv, calls, choices, knobs=(), ops=0, fills=None, older=b""):
    """A seed that runs only `calls` (OP2 names) after the older calls in `ops` (`older`: their choices);
    `choices`: the new calls' bytes."""
    q, k, v = fills or (fill_generated(0, seed=1), fill_generated(1, seed=2), fill_generated(0, seed=3))
    op2 = 0
    for c in calls:
        op2 |= OP2[c]
    return seed(variant, causal, n, d, dv, q, k, v, knobs, ops) + older + bytes([op2 ^ 0xFF]) + choices


def model_choices(text, byte_pieces=True, heads=2, hs=4, kv_shared=True, hidden=6, layers=2, seq=8, shared=False):
    """run_model's bytes: a tokenizer of 265 pieces (the byte pieces, then " ", "a", "b", "ab", " a", " ab") or of
    9 (no byte pieces), the text from the alphabet " ab\xc3\xa9x" (indices), BOS, a checkpoint, the forward
    pass on the encoded ids and again from start k = 1."""
    extra = [[0], [1], [2], [1, 2], [0, 1], [0, 1, 2]]  # indices into the alphabet
    vocab = (259 if byte_pieces else 3) + len(extra)
    b = bytes([(vocab - 3) & 255, (vocab - 3) >> 8, 1 if byte_pieces else 0])
    for i in range(vocab):
        if i >= (259 if byte_pieces else 3):
            e = extra[i - (259 if byte_pieces else 3)]
            b += bytes([len(e) - 1]) + bytes(e)
        b += bytes([(i * 5) % 32])  # the score
    b += bytes([0, 0])  # no pokes into the tokenizer, the tokenizer's own vocabulary
    b += bytes(vocab)  # av_token_piece's prev for each id: -1
    b += bytes([len(text), 0]) + bytes(text) + bytes([3, 0])  # the text (alphabet), BOS = 1, cap = len + 2
    b += bytes([heads - 1, hs // 2 - 1] + ([1 if kv_shared else 0] if heads == 2 else []) +  # read for 2 heads only
               [hidden - 1, layers - 1, seq - 1, 1 if shared else 0])
    b += fill_generated(0, seed=5)  # the weights
    b += bytes([0, 1, 0, 0, 0, 0])  # no poke; the encoded ids; start 0; every capture; an exact workspace; k = 1
    return b


def add_issue27_seeds(seeds):
    # the recurrent and chunkwise forms, the path costs and the random matrices, per variant (causal: the forms
    # need it); the random matrix asked: omega for performer, E for linformer, DWC for focused
    for var in range(15):
        which = {7: 1, 6: 2, 5: 4}.get(var, 1)
        knobs = [(4, bytes([8 + 3]))] if var == 5 else []  # focused: a DWC kernel of 3
        causal = 0 if var in (4, 6, 11) or var == 5 else 1
        seeds["i27_forms_v%02d" % var] = new_calls(var, causal, 9, 3, 2, ["forms", "costs", "random"],
                                                   bytes([0, 0, which, 0]), knobs)
    seeds["i27_forms_softmax_window_decay"] = new_calls(0, 1, 12, 4, 3, ["forms", "costs"], bytes([0, 0]),
                                                        [(17, bytes([8 + 3])), (16, bytes([64 + 4 + 3, 200]))])
    seeds["i27_forms_chunk2"] = new_calls(1, 1, 11, 3, 2, ["forms"], bytes([0, 0]), [(19, bytes([8 + 2]))])
    # the semiseparable rank of M, both routes, σ₁ from the block
    for route in (0, 1):
        seeds["i27_semisep_route%d" % route] = new_calls(1, 0, 10, 3, 2, ["semisep"],
                                                         bytes([route + 1, 8, 8, 1, 0, 0]), ops=OP_MATRIX,
                                                         older=bytes([0]))  # av_matrix's exact workspace
    # recall: the drawn pairs, the input's keys, for a few memories
    for var in (0, 1, 7, 13, 14):
        seeds["i27_recall_v%02d" % var] = new_calls(var, 1 if var >= 13 else 0, 8, 4, 4, ["recall"],
                                                    bytes([7, 0, 0, 0, var & 1, 0]))
    # distillation: 2 columns, 2 steps (then the same one step at a time), and an overflowing learning rate
    seeds["i27_distill_2x2"] = new_calls(0, 1, 6, 3, 2, ["distill"], bytes([3, 3]) + fill_generated(0, seed=9) +
                                         bytes([0, 0, 0, 1, 0]))
    seeds["i27_distill_lr_huge"] = new_calls(0, 0, 4, 2, 2, ["distill"], bytes([3, 2]) + fill_generated(0, seed=9) +
                                             bytes([0, 4, 0, 0, 113, 0]))
    # .npy: 2×3 float64 and 4 float32 headers written, parsed back with data, decoded
    seeds["i27_npy_2x3_f8"] = new_calls(0, 0, 2, 2, 1, ["npy"], bytes([3, 1, 2, 3] + [0] * 8 + [128, 0]) +
                                        bytes(range(48)) + bytes([5]))
    seeds["i27_npy_4_f4"] = new_calls(0, 0, 2, 2, 1, ["npy"], bytes([2, 0, 4] + [0] * 9 + [128, 0]) +
                                      bytes([0, 0, 128, 63] * 4) + bytes([1]))
    # a real model: byte pieces and merges, grouped-query attention, an unshared classifier; and a small one
    seeds["i27_model_bytes"] = new_calls(0, 0, 2, 2, 1, ["model"], model_choices([1, 2, 0, 1, 3, 4, 0, 2, 5]))
    seeds["i27_model_small"] = new_calls(0, 0, 2, 2, 1, ["model"], model_choices([1, 0, 2, 1], byte_pieces=False,
                                                                                 heads=1, hs=2, hidden=3, layers=1,
                                                                                 seq=4, shared=True))


def main():
    seeds = {}
    for var in range(VARIANTS):
        for causal in (0, 1):
            n, d = 6 + var % 7, 2 + var % 5
            g = (var + causal) % 5
            seeds["v%02d_causal%d" % (var, causal)] = seed(
                var, causal, n, d, 3, fill_generated(g, seed=var), fill_generated(g, seed=var), fill_generated(0, seed=7))
    # hostile values (issue 7's reproductions and their relatives)
    seeds["cosformer_huge_q_denormal_k"] = seed(12, 0, 2, 1, 1, fill_const("1", [(0, "1e33")]), fill_const("1e-40"),
                                                fill_const("1"))
    for var in (1, 2, 3, 5, 10, 12):
        seeds["all_1e30_v%02d" % var] = seed(var, 0, 4, 3, 2, fill_const("1e30"), fill_const("1e30"), fill_const("1"))
    seeds["exp_overflow_edge"] = seed(3, 1, 5, 2, 2, fill_generated(0, 9), fill_const("89"), fill_generated(1))
    seeds["nan_in_q"] = seed(0, 0, 4, 4, 2, fill_generated(0, overrides=[(3, "nan")]), fill_generated(1), fill_generated(2))
    seeds["inf_in_v"] = seed(7, 0, 4, 4, 2, fill_generated(0), fill_generated(1), fill_generated(2, overrides=[(1, "inf")]))
    seeds["flt_max_keys_taylor"] = seed(8, 0, 3, 2, 1, fill_const("FLT_MAX"), fill_const("FLT_MAX"), fill_const("1"))
    seeds["huge_spread_performer"] = seed(7, 0, 8, 4, 2, fill_generated(0, 12), fill_generated(0, 12), fill_generated(0))
    # knobs at and past their ranges: p = 10 and 11, s = n and n + 1, m = 65536, order 4 and 5, N 64 and 65,
    # landmarks n, iters -1 (zero iterations), the largest seed, a DWC kernel of 2n - 1
    seeds["knobs_focused_p10_dwc"] = seed(5, 0, 5, 3, 2, fill_generated(2), fill_generated(2), fill_generated(0),
                                          [(3, small(10)), (4, bytes([85]))])
    seeds["knobs_focused_p11"] = seed(5, 0, 5, 3, 2, fill_generated(2), fill_generated(2), fill_generated(0), [(3, small(11))])
    seeds["knobs_linformer_s_n"] = seed(6, 0, 7, 3, 2, fill_generated(1), fill_generated(1), fill_generated(0),
                                        [(5, bytes([82])), (6, small(1)), (7, small(1))])
    seeds["knobs_linformer_s_n1"] = seed(6, 0, 7, 3, 2, fill_generated(1), fill_generated(1), fill_generated(0), [(5, bytes([83]))])
    seeds["knobs_performer_m_max"] = seed(7, 0, 3, 2, 1, fill_generated(0), fill_generated(0), fill_generated(0),
                                          [(8, bytes([99])), (9, small(1))])
    seeds["knobs_taylor_order4"] = seed(8, 0, 4, 3, 2, fill_generated(3), fill_generated(3), fill_generated(0), [(11, small(4))])
    seeds["knobs_taylor_order5"] = seed(8, 0, 4, 3, 2, fill_generated(3), fill_generated(3), fill_generated(0), [(11, small(5))])
    seeds["knobs_explimit_N64"] = seed(9, 1, 4, 2, 2, fill_generated(4), fill_generated(4), fill_generated(0), [(12, bytes([91]))])
    seeds["knobs_nystrom_iters_m1"] = seed(11, 0, 9, 3, 2, fill_generated(1), fill_generated(1), fill_generated(0),
                                           [(13, bytes([82])), (14, small(-1))])
    seeds["knobs_seed_max"] = seed(7, 0, 4, 2, 2, fill_generated(0), fill_generated(0), fill_generated(0), [(10, bytes([110]))])
    seeds["knobs_scale_huge"] = seed(0, 1, 4, 2, 2, fill_generated(0), fill_generated(0), fill_generated(0), [(2, bytes([113]))])
    # the calls added in issue 27 (OP2_*), alone: the older calls off (ops 0), then the OP2 byte and exactly
    # the choices each new call reads, in fuzz_api.c's order
    add_issue27_seeds(seeds)
    os.makedirs(OUT, exist_ok=True)
    for name, data in sorted(seeds.items()):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print("%d seeds, %d bytes in %s" % (len(seeds), sum(map(len, seeds.values())), OUT))


if __name__ == "__main__":
    main()
