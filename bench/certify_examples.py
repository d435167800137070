#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""bench/certify_examples.py: `plancert certify` on every bundled Calculon strategy (with its
model and the A100 80 GB system), one process at a time (plancert is single-threaded): wall
time and peak RSS of each run from wait4()'s rusage. Prints a table; exits 1 when a run is
refused or exceeds the targets of the training issue (30 s, 4 GiB).

    /usr/bin/python3 bench/certify_examples.py --plancert build/cli/plancert [--target queue]
"""
import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "calculon"
MODEL_OF = {"3072_t4_p64_d12_mbs4_full": "megatron-1T"}  # else the strategy's prefix


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plancert", required=True)
    ap.add_argument("--target", default="", help="also bind (reference-queue, reference-slot, queue)")
    ap.add_argument("--max-seconds", type=float, default=30.0)
    ap.add_argument("--max-gib", type=float, default=4.0)
    a = ap.parse_args()
    bad = 0
    print(f"{'strategy':32} {'model':14} {'exit':>4} {'wall s':>8} {'peak RSS MiB':>13}")
    for s in sorted((EXAMPLES / "strategies").glob("*.json")):
        model = MODEL_OF.get(s.stem, s.stem.rsplit("_", 1)[0])
        args = [a.plancert, "certify", "--model", str(EXAMPLES / "models" / f"{model}.json"), "--strategy", str(s),
                "--system", str(EXAMPLES / "systems" / "a100_80g.json")] + (["--target", a.target] if a.target else [])
        t0 = time.monotonic()
        pid = os.posix_spawn(a.plancert, args, os.environ, file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
        _, status, usage = os.wait4(pid, 0)
        wall = time.monotonic() - t0
        rc = os.waitstatus_to_exitcode(status)
        rss_mib = usage.ru_maxrss / 1024
        ok = rc == 0 and wall <= a.max_seconds and rss_mib <= a.max_gib * 1024
        bad += not ok
        print(f"{s.stem:32} {model:14} {rc:>4} {wall:>8.2f} {rss_mib:>13.0f}{'' if ok else '  FAIL'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
