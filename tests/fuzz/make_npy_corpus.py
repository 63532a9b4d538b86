#!/usr/bin/env python3
"""make_npy_corpus.py: writes the seed corpus of tests/fuzz/fuzz_npy.c (standard library only).

    python3 tests/fuzz/make_npy_corpus.py [DIR]      (default tests/fuzz/corpus_npy; the files are committed)

Each seed is one small .npy file: valid version-1 and version-2 headers of both dtypes ('<f4', '<f8') and
odd shapes ((), (0,), (3,), (2, 3, 4), eight dimensions, Python 2's long suffix, keys in another order,
double quotes, tabs and newlines), and the ones the parser must reject (big-endian, integer and nested
dtypes, Fortran order, negative, absurd and too many dimensions, truncated header and data, bad magic and
version, unknown, missing and repeated keys, a NUL inside the header). Deterministic: rerunning it
rewrites the same bytes.
"""
import os
import struct
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_npy")


def npy(header, data=b"", version=1, pad=True, hlen=None):
    """A file: magic, version, header length, the header dict (padded to 64 with spaces and '\\n'), data."""
    pre = 10 if version == 1 else 12
    h = header.encode("latin-1") if isinstance(header, str) else header
    if pad:
        total = (pre + len(h) + 1 + 63) // 64 * 64
        h = h + b" " * (total - pre - len(h) - 1) + b"\n"
    n = len(h) if hlen is None else hlen
    size = struct.pack("<H", n) if version == 1 else struct.pack("<I", n)
    return b"\x93NUMPY" + bytes([version, 0]) + size + h + data


def dict_(descr="<f4", shape="(3,)", fortran="False"):
    return "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)


def f4(*xs):
    return struct.pack("<%df" % len(xs), *xs)


def f8(*xs):
    return struct.pack("<%dd" % len(xs), *xs)


SEEDS = {
    # valid
    "ok_v1_f4_2x3": npy(dict_("<f4", "(2, 3)"), f4(1, -2, 0.5, 1e30, -0.0, 1e-40)),
    "ok_v1_f8_3": npy(dict_("<f8", "(3,)"), f8(1.0, 1e300, -1e-310)),
    "ok_v2_f4_2x3x4": npy(dict_("<f4", "(2, 3, 4)"), f4(*range(24)), version=2),
    "ok_v2_f8_2x2": npy(dict_("<f8", "(2, 2)"), f8(1, 2, 3, 4), version=2),
    "ok_v1_f4_scalar": npy(dict_("<f4", "()"), f4(3.5)),
    "ok_v1_f8_empty": npy(dict_("<f8", "(0,)")),
    "ok_v1_f4_0x3": npy(dict_("<f4", "(0, 3)")),
    "ok_v1_f4_8dims": npy(dict_("<f4", "(1, 1, 1, 1, 1, 1, 1, 2)"), f4(1, 2)),
    "ok_v1_f4_long_suffix": npy(dict_("<f4", "(2L, 1L)"), f4(1, 2)),
    "ok_v2_key_order_quotes": npy("{\"shape\": (2,), 'fortran_order': False, \"descr\": '<f8'}", f8(1, 2), version=2),
    "ok_v1_spaces_no_trailing_comma": npy("{ 'descr' :'<f4' ,\t'fortran_order':False,\n'shape':( 1 , ) }", f4(7)),
    "ok_v1_trailing_data": npy(dict_("<f4", "(1,)"), f4(1, 2, 3)),
    "ok_v1_big_shape_empty": npy(dict_("<f4", "(0, 9007199254740992)")),
    # rejected: dtype and order
    "bad_big_endian_f4": npy(dict_(">f4", "(2,)"), b"\0" * 8),
    "bad_int32": npy(dict_("<i4", "(2,)"), b"\0" * 8),
    "bad_float16": npy(dict_("<f2", "(2,)"), b"\0" * 4),
    "bad_nested_descr": npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", b"\0" * 8),
    "bad_fortran_true": npy(dict_("<f4", "(2, 2)", "True"), f4(1, 2, 3, 4)),
    "bad_nul_in_descr": npy(dict_("<f4\0", "(2,)"), f4(1, 2)),
    # rejected: shapes
    "bad_negative_dim": npy(dict_("<f4", "(-1, 3)")),
    "bad_absurd_dim": npy(dict_("<f4", "(99999999999999999999999, 2)")),
    "bad_count_overflow": npy(dict_("<f4", "(1099511627776, 1099511627776)")),
    "bad_big_shape_no_data": npy(dict_("<f8", "(1099511627776, 3)")),
    "bad_9dims": npy(dict_("<f4", "(1, 1, 1, 1, 1, 1, 1, 1, 1)"), f4(1)),
    "bad_shape_list": npy(dict_("<f4", "[3, 4]"), b"\0" * 48),
    "bad_shape_float": npy(dict_("<f4", "(3.5,)"), b"\0" * 16),
    # rejected: truncation, framing, keys
    "bad_truncated_data": npy(dict_("<f4", "(3, 5)"), b"\0" * 59),
    "bad_truncated_header": npy(dict_("<f4", "(3,)"))[:40],
    "bad_hlen_past_end_v2": npy(dict_("<f4", "(3,)"), version=2, hlen=0xFFFFFF),
    "bad_version_3": npy(dict_("<f4", "(1,)"), f4(1), version=3),
    "bad_magic": b"\x93NUMPZ" + npy(dict_("<f4", "(1,)"), f4(1))[6:],
    "bad_extra_key": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'foo': 1}", f4(1)),
    "bad_missing_shape": npy("{'descr': '<f4', 'fortran_order': False}", f4(1)),
    "bad_repeated_key": npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", f4(1)),
    "bad_escape_in_string": npy("{'descr': '<f4\\\\', 'fortran_order': False, 'shape': (1,)}", f4(1)),
    "bad_junk_after_dict": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", f4(1)),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, data in sorted(SEEDS.items()):
        with open(os.path.join(OUT, name + ".npy"), "wb") as f:
            f.write(data)
    print("%d seeds, %d bytes in %s" % (len(SEEDS), sum(map(len, SEEDS.values())), OUT))


if __name__ == "__main__":
    main()
