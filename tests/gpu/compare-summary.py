#!/usr/bin/env python3
"""Summarizes tests/gpu/device_compare.sh's JSON: per case, ours before -> after
(ms, with the tridiag / qr / back split) and the XsyevBatched / ours ratio after.

    tests/gpu/compare-summary.py DIR    # DIR holds NAME-base.json and NAME-new.json
"""
import glob
import json
import os
import sys


def cases(path):
    if not os.path.exists(path):
        return {}
    return {(c["n"], c["batch"], c["precision"]): c for c in json.load(open(path))["cases"]}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for base_path in sorted(glob.glob(os.path.join(sys.argv[1], "*-base.json"))):
        name = os.path.basename(base_path)[: -len("-base.json")]
        base, new = cases(base_path), cases(base_path.replace("-base.json", "-new.json"))
        job = json.load(open(base_path))["job"]
        print(f"== {name} ({job})")
        for key in sorted(set(base) | set(new), key=lambda k: (k[2], k[1], k[0])):
            b, a = base.get(key), new.get(key)

            def show(c):
                if c is None:
                    return "        -"
                s = c["split_ms"]
                return (f"{c['ours']['median_ms']:9.3f} ({s['tridiag']:.3f} / {s['qr']:.3f} / "
                        f"{s['back']:.3f})")
            ratio = f"{a['ratio_xsyevbatched_over_ours']:.2f}x" if a else "-"
            print(f"n={key[0]:3d} batch={key[1]:4d} {key[2]:4s} {show(b)} -> {show(a)}  "
                  f"XsyevBatched/ours {ratio}")


if __name__ == "__main__":
    main()
