#!/usr/bin/env python3
"""Writes Keras' reuters or imdb data set in tpudsl's token-sequence format.

    tools/export_keras_dataset.py reuters DIR      # DIR/reuters_train.txt, DIR/reuters_test.txt
    tools/export_keras_dataset.py imdb DIR         # DIR/imdb_train.txt, DIR/imdb_test.txt

Needs Keras (`pip install tensorflow` or `keras`); the data set is Keras' own, with its defaults
(start char 1, OOV char 2, index_from 3, seed 113, num_words=None). The format:

    tpudsl-sequences 1
    count N
    <label>\t<token> <token> ...      (one sample per line)

Files are written to a temporary name and renamed, so a crash leaves no half-written file.
"""
import os
import sys


def write_split(path, xs, ys):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write("tpudsl-sequences 1\n")
        f.write("count %d\n" % len(xs))
        for x, y in zip(xs, ys):
            f.write("%d\t%s\n" % (int(y), " ".join(str(int(t)) for t in x)))
    os.replace(tmp, path)


def main(argv):
    if len(argv) != 3 or argv[1] not in ("reuters", "imdb"):
        sys.stderr.write(__doc__)
        return 2
    name, out = argv[1], argv[2]
    try:
        from tensorflow.keras import datasets  # noqa: PLC0415
    except ImportError:
        try:
            from keras import datasets  # noqa: PLC0415
        except ImportError:
            sys.stderr.write("export_keras_dataset: Keras is not installed (pip install tensorflow)\n")
            return 1
    loader = getattr(datasets, name)
    (x_train, y_train), (x_test, y_test) = loader.load_data()
    os.makedirs(out, exist_ok=True)
    write_split(os.path.join(out, name + "_train.txt"), x_train, y_train)
    write_split(os.path.join(out, name + "_test.txt"), x_test, y_test)
    print("wrote %d training and %d test samples to %s" % (len(x_train), len(x_test), out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
