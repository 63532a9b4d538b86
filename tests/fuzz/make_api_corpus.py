#!/usr/bin/env python3
"""make_api_corpus.py: writes the seed corpus of tests/fuzz/fuzz_api.c (standard library only).

    python3 tests/fuzz/make_api_corpus.py [DIR]      (default tests/fuzz/corpus_api; the files are committed)

One seed per variant, non-causal and causal, on av_generate's data (each generator in turn), with the
default knobs, exact workspaces and every call; and a few hostile ones (all entries 1e30, denormal keys
against huge queries, NaN and Inf entries, short and NULL workspaces, knobs at and past their ranges).
The bytes follow the decoder of fuzz_api.c (LLVMFuzzerTestOneInput, rd_fill, rd_f64); the bytes after the
inputs (per-call choices) are left out, and the reader gives 0 for them: exact workspaces, defaults.
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
    os.makedirs(OUT, exist_ok=True)
    for name, data in sorted(seeds.items()):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print("%d seeds, %d bytes in %s" % (len(seeds), sum(map(len, seeds.values())), OUT))


if __name__ == "__main__":
    main()
