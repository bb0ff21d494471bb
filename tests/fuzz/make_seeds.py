#!/usr/bin/env python3
"""Writes the seed corpora of the data-loader fuzz harnesses: tests/fuzz/corpus/idx/, cifar10/,
sequences/, csv/ and freedict/ (the weights harness writes its own, see fuzz_weights.cpp). The same files every time:
gzip members carry mtime 0 and the pseudo-random bytes come from a fixed seed.

    python3 tests/fuzz/make_seeds.py [corpus-directory]     (default: tests/fuzz/corpus beside this file)

Files of the same name are overwritten; others (crash inputs added to a corpus) are left alone.
Each corpus holds valid files and files a loader must refuse, near the edges of its format."""

import os
import random
import struct
import sys
import zlib


def put(directory, name, data):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


# ---- IDX ------------------------------------------------------------------------------------------

def idx(rank, dims, payload, magic=None):
    """An IDX file of unsigned bytes."""
    head = struct.pack(">I", 0x800 | rank if magic is None else magic)
    head += b"".join(struct.pack(">I", d) for d in dims)
    return head + bytes(payload)


def gzip_member(data, flags=0, level=9):
    """One gzip member (RFC 1952) with the optional fields `flags` asks for: 0x02 FHCRC, 0x04 FEXTRA,
    0x08 FNAME, 0x10 FCOMMENT."""
    head = b"\x1f\x8b\x08" + bytes([flags]) + struct.pack("<I", 0) + b"\x02\x03"
    if flags & 0x04:
        extra = b"TP\x04\x00tpud"
        head += struct.pack("<H", len(extra)) + extra
    if flags & 0x08:
        head += b"labels-idx1-ubyte\x00"
    if flags & 0x10:
        head += b"a seed for fuzz_idx\x00"
    if flags & 0x02:
        head += struct.pack("<H", zlib.crc32(head) & 0xFFFF)
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    body = c.compress(data) + c.flush()
    return head + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def idx_seeds(d):
    rnd = random.Random(801)
    labels = idx(1, [60], [rnd.randrange(10) for _ in range(60)])
    images = idx(3, [2, 28, 28], [(i * 7 + (i // 28) * 3) & 0xFF for i in range(2 * 28 * 28)])
    put(d, "labels_plain", labels)
    put(d, "labels.gz", gzip_member(labels))
    put(d, "labels_named_hcrc.gz", gzip_member(labels, flags=0x02 | 0x04 | 0x08 | 0x10))
    put(d, "labels_stored.gz", gzip_member(labels, level=0))
    put(d, "images_2x28x28", images)
    put(d, "images_2x28x28.gz", gzip_member(images))
    put(d, "rank0", idx(0, [], [42]))
    put(d, "rank0.gz", gzip_member(idx(0, [], [42])))
    put(d, "rank2", idx(2, [3, 4], range(12)))
    put(d, "empty_items", idx(1, [0], []))
    put(d, "empty_images.gz", gzip_member(idx(3, [0, 28, 28], [])))
    # several members, split inside the header, and an empty one
    put(d, "multi_member.gz", gzip_member(labels[:6]) + gzip_member(b"") + gzip_member(labels[6:30]) +
        gzip_member(labels[30:]))
    gz = gzip_member(labels)
    put(d, "truncated_trailer.gz", gz[:-8])          # no CRC-32 and size
    put(d, "truncated_size.gz", gz[:-2])             # half the size field
    put(d, "truncated_deflate.gz", gz[: len(gz) // 2])
    put(d, "trailing_garbage.gz", gz + b"junk")
    put(d, "trailing_zeros.gz", gz + bytes(8))
    put(d, "trailing_magic.gz", gz + b"\x1f\x8b")  # the start of a member and no more
    bad = bytearray(gz)
    bad[-8] ^= 0x01
    put(d, "bad_crc.gz", bytes(bad))
    bad = bytearray(gz)
    bad[-4] ^= 0x01
    put(d, "bad_size.gz", bytes(bad))
    bad = bytearray(gz)
    bad[20] ^= 0x40
    put(d, "corrupt_deflate.gz", bytes(bad))
    put(d, "labels_trailing_byte", labels + b"\x00")
    put(d, "labels_short", labels[:-1])
    put(d, "labels_short.gz", gzip_member(labels[:-1]))
    put(d, "labels_trailing.gz", gzip_member(labels + b"\x07"))
    put(d, "wrong_magic", idx(1, [4], range(4), magic=0x00000901))
    put(d, "float_magic", idx(1, [4], range(4), magic=0x00000D01))
    put(d, "header_only", idx(3, [1, 28, 28], []))
    # headers announcing far more than the file holds, or a product beyond 64 bits
    put(d, "lying_count", idx(3, [60000, 28, 28], range(100)))
    put(d, "lying_count.gz", gzip_member(idx(3, [60000, 28, 28], range(100))))
    put(d, "huge_dims", idx(3, [0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF], range(16)))
    put(d, "wrapping_dims", idx(3, [0x10000, 0x10000, 0x10000], range(16)))  # 2^48
    put(d, "wrapping_rank4", idx(4, [0x10000, 0x10000, 0x10000, 0x10000], []))  # 2^64: 0 when it wraps
    put(d, "zero_after_overflow", idx(4, [0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0], []))  # 0 items: valid
    put(d, "zero_dim_then_large", idx(3, [0, 0xFFFFFFFF, 0xFFFFFFFF], []))              # 0 items: valid


# ---- CIFAR-10 -------------------------------------------------------------------------------------

def cifar_record(label, rnd):
    return bytes([label]) + bytes(rnd.randrange(256) for _ in range(3072))


def cifar_seeds(d):
    rnd = random.Random(10)
    one = cifar_record(3, rnd)
    two = cifar_record(0, rnd) + cifar_record(9, rnd)
    put(d, "one_record", one)
    put(d, "two_records", two)
    put(d, "bad_label", bytes([10]) + one[1:])
    put(d, "bad_label_second", two[:3073] + bytes([255]) + two[3074:])
    put(d, "short_record", one[:-1])
    put(d, "long_record", one + b"\x00")
    put(d, "label_only", bytes([1]))
    put(d, "empty", b"")


# ---- sequences ------------------------------------------------------------------------------------

def sequences(samples, count=None, eol="\n", header="tpudsl-sequences 1"):
    lines = [header, "count %d" % (len(samples) if count is None else count)]
    lines += ["%s\t%s" % (label, " ".join(str(t) for t in ids)) for label, ids in samples]
    return (eol.join(lines) + eol).encode()


def sequence_seeds(d):
    rnd = random.Random(113)
    samples = [(rnd.randrange(46), [1] + [rnd.randrange(2, 10000) for _ in range(rnd.randrange(0, 40))])
               for _ in range(12)]
    samples[3] = (5, [])
    put(d, "reuters_like", sequences(samples))
    put(d, "crlf", sequences(samples[:4], eol="\r\n"))
    put(d, "small", sequences([(3, [1, 2, 2, 8, 43]), (0, []), (1, [7])]))
    put(d, "empty_lines", b"tpudsl-sequences 1\ncount 2\n\n3\t1 2\n\r\n\n4\t5\n\n")
    put(d, "no_final_newline", sequences([(2, [1, 4])])[:-1])
    put(d, "count_zero", sequences([]))
    put(d, "extremes", sequences([(2147483647, [0, 2147483647]), (0, [0])]))
    put(d, "count_more", sequences(samples[:2], count=3))
    put(d, "count_fewer", sequences(samples[:2], count=1))
    put(d, "huge_count", sequences(samples[:2], count=10 ** 12))
    put(d, "max_count", sequences(samples[:2], count=2 ** 63 - 1))
    put(d, "negative_count", sequences(samples[:2], count=-1))
    put(d, "negative_label", sequences([(-1, [3, 4])]))
    put(d, "label_too_big", sequences([(2147483648, [3, 4])]))
    put(d, "label_wraps", sequences([(4294967299, [3, 4])]))   # 2^32 + 3
    put(d, "id_too_big", sequences([(1, [3, 2147483648])]))
    put(d, "negative_id", sequences([(1, [3, -4])]))
    put(d, "trailing_space", b"tpudsl-sequences 1\ncount 1\n3\t1 2 \n")
    put(d, "double_space", b"tpudsl-sequences 1\ncount 1\n3\t1  2\n")
    put(d, "leading_space", b"tpudsl-sequences 1\ncount 1\n3\t 1 2\n")
    put(d, "no_tab", b"tpudsl-sequences 1\ncount 1\n3 1 2\n")
    put(d, "two_tabs", b"tpudsl-sequences 1\ncount 1\n3\t1\t2\n")
    put(d, "not_a_number", b"tpudsl-sequences 1\ncount 1\n3\t1 x2\n")
    put(d, "bad_header", sequences(samples[:1], header="tpudsl-sequences 2"))
    put(d, "bad_count", b"tpudsl-sequences 1\ncount two\n")
    put(d, "header_only", b"tpudsl-sequences 1\n")
    put(d, "cr_inside", b"tpudsl-sequences 1\ncount 1\n3\t1\r2\n")
    put(d, "two_crs", b"tpudsl-sequences 1\r\r\ncount 1\r\r\n3\t1 2\r\r\n")


# ---- CSV ------------------------------------------------------------------------------------------

def csv_seeds(d):
    """fuzz_csv's inputs: one byte of options (bit 0: label in column 0, bit 1: header), then the file."""
    rnd = random.Random(7)
    rows = "".join(",".join(str(rnd.randrange(256)) for _ in range(9)) + "\n" for _ in range(12))
    put(d, "pixels_label", b"\x01" + rows.encode())
    put(d, "pixels_gz", b"\x00" + gzip_member(rows.encode()))
    put(d, "header_crlf", b"\x03" + b"label,a,b\r\n1,2,3\r\n4,5,6\r\n")
    put(d, "blank_lines", b"\x00" + b"1,2\n\n \t\n3,4")
    put(d, "floats", b"\x00" + b"1.5,-2e3,+7\n.5,5.,-0\n 3 , 4 ,5\n")
    put(d, "ragged", b"\x01" + b"1,2,3\n4,5\n")
    put(d, "not_numbers", b"\x00" + b"1,x\n2,nan\n3,inf\n4,1e39\n5,,\n")
    put(d, "one_column", b"\x01" + b"3\n4\n5\n")
    put(d, "empty", b"\x00")


# ---- FreeDict --------------------------------------------------------------------------------------

B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def b64(v):
    s = ""
    while True:
        s = B64[v % 64] + s
        v //= 64
        if v == 0:
            return s


def dictionary(entries):
    """fuzz_freedict's input: a dictd index, a NUL byte, the text (as bytes)."""
    index, text = "", b""
    for headword, entry in entries:
        data = entry.encode()
        index += "%s\t%s\t%s\n" % (headword, b64(len(text)), b64(len(data)))
        text += data
    return index.encode(), text


def freedict_seeds(d):
    entries = [("00databaseshort", "00-database-short\n   English-Spanish FreeDict Dictionary\n"),
               ("a", "a /\u0259/\n1. a, dentro de, en, por\n2. alguien, alguno, cierto\n3. un, una\n"),
               ("abandon", "abandon /\u0259b\u00e6nd\u0259n/\nabandonar\n"),
               ("abate", "abate /\u0259beit/\n1. calmarse, sosegarse\n2. amainar\n"),
               ("abc", "ABC /eibi\u02d0si\u02d0/\nabec\u00e9, alfabeto\n")]
    index, text = dictionary(entries)
    put(d, "small", index + b"\0" + text)
    put(d, "small_gz", index + b"\0" + gzip_member(text, flags=0x04))   # dictzip's extra field
    put(d, "crlf_senses", dictionary([("x", "x\r\n1. uno, dos\r\n")])[0] + b"\0" + b"x\r\n1. uno, dos\r\n")
    put(d, "two_fields", b"abandon\tA\n\0abandon\nabandonar\n")
    put(d, "bad_digit", b"abandon\tA$\tB\n\0abandon\nabandonar\n")
    put(d, "eleven_digits", b"abandon\tA\tBBBBBBBBBBB\n\0abandon\nabandonar\n")
    put(d, "past_end", index + b"\0" + text[:-5])
    put(d, "no_translation", b"abandon\tA\tI\n\0abandon\n")
    put(d, "gz_truncated", index + b"\0" + gzip_member(text)[:-6])
    put(d, "empty", b"")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    idx_seeds(os.path.join(root, "idx"))
    cifar_seeds(os.path.join(root, "cifar10"))
    sequence_seeds(os.path.join(root, "sequences"))
    csv_seeds(os.path.join(root, "csv"))
    freedict_seeds(os.path.join(root, "freedict"))


if __name__ == "__main__":
    main()
