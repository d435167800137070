#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end cases of `plancert certify --phase ...` (ctest label cli): one case per run."""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def run(plancert, *args):
    p = subprocess.run([plancert, "certify", *args], capture_output=True, text=True, timeout=280)
    return p.returncode, p.stdout + p.stderr


def expect(cond, what, out):
    if not cond:
        print(f"FAILED: {what}\n--- output ---\n{out}")
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plancert", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--case", required=True)
    a = ap.parse_args()
    hf = lambda name: os.path.join(a.root, "examples", "hf", name + ".config.json")
    h100 = os.path.join(a.root, "examples", "calculon", "systems", "h100_80g_nvl8.json")
    llama70 = ["--model", hf("llama-3-70b"), "--system", h100]
    capacity = str(80 * 2**30)
    c = a.case
    if c == "llama3_70b_decode_t8_certified":
        rc, out = run(a.plancert, *llama70, "--phase", "decode", "--batch", "64", "--context", "8192", "--tp", "8")
        expect(rc == 0 and out.rstrip().endswith("certified"), "exit 0 and certified", out)
    elif c == "llama3_70b_decode_t1_rejected":
        rc, out = run(a.plancert, *llama70, "--phase", "decode", "--batch", "64", "--context", "8192", "--tp", "1")
        expect(rc == 1, "exit 1", out)
        expect("error[CAPM-2]" in out and capacity in out and "kv_cache 171798691840" in out, "CAPM-2 with the figures", out)
    elif c == "max_batch":
        with tempfile.TemporaryDirectory() as d:
            rep = os.path.join(d, "r.json")
            rc, out = run(a.plancert, *llama70, "--phase", "decode", "--max-batch", "--context", "8192", "--tp", "8", "--report", rep)
            expect(rc == 0, "exit 0", out)
            inf = json.load(open(rep))["inference"]
            mb = inf["max_batch"]
            expect(mb["value"] == inf["batch"] and mb["next"]["rejected_by"] == "CAPM-2", "max batch certified and the next rejected", out)
            expect(int(mb["value"]) >= 64, "at least the 64 known to fit", out)
    elif c == "report_json":
        with tempfile.TemporaryDirectory() as d:
            rep, snaps = os.path.join(d, "r.json"), os.path.join(d, "snaps")
            rc, out = run(a.plancert, *llama70, "--phase", "decode", "--batch", "64", "--context", "8192", "--tp", "8", "--report", rep, "--out", snaps)
            expect(rc == 0, "exit 0", out)
            inf = json.load(open(rep))["inference"]
            keys = {"phase", "batch", "context", "per_rank", "matrix_flops", "kv_bytes_per_token"}
            expect(keys <= set(inf), "report keys", json.dumps(inf)[:2000])
            expect(inf["kv_bytes_per_token"] == "327680" and len(inf["per_rank"]) == 8, "per-token KV and 8 ranks", json.dumps(inf)[:2000])
            r0 = inf["per_rank"][0]
            expect({"rank", "weights_bytes", "kv_cache_bytes", "workspace_bytes", "total_bytes", "capacity_bytes"} <= set(r0), "per-rank keys", json.dumps(r0))
            expect(r0["capacity_bytes"] == capacity and r0["kv_cache_bytes"] == str(2 * 64 * 8192 * 80 * 128 * 2), "per-rank figures", json.dumps(r0))
            # the trusted path accepts the written snapshots
            for child, parent in (("distributed", "model"), ("portable", "distributed")):
                p = subprocess.run([a.plancert, "verify", os.path.join(snaps, child + ".json"), "--parent", os.path.join(snaps, parent + ".json")],
                                   capture_output=True, text=True, timeout=280)
                expect(p.returncode == 0, f"verify {child} --parent {parent}", p.stdout + p.stderr)
    elif c.startswith("bad_"):
        base = ["--model", hf("llama-2-7b"), "--phase", "decode", "--batch", "8", "--context", "1024"]
        change = {"bad_batch_zero": ("--batch", "0", "CONFIG-4"), "bad_context_too_long": ("--context", "4097", "CONFIG-5"),
                  "bad_tp_not_dividing": ("--tp", "3", "CONFIG-5"), "bad_phase": ("--phase", "training", "CONFIG-6"),
                  "bad_strategy_with_phase": ("--strategy", "x.toml", "CONFIG-6")}[c]
        args = list(base)
        if change[0] in args:
            args[args.index(change[0]) + 1] = change[1]
        else:
            args += [change[0], change[1]]
        rc, out = run(a.plancert, *args)
        expect(rc == 2 and f"error[{change[2]}]" in out, f"exit 2 with {change[2]}", out)
    else:
        print(f"unknown case {c}")
        sys.exit(2)
    print(f"ok {c}")


if __name__ == "__main__":
    main()
