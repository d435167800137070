#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Runs the negative corpus (tests/corpus/, written by tools/make_corpus.py) against plancert.

    /usr/bin/python3 tools/run_corpus.py --plancert BIN --corpus DIR [--gate-tool BIN]

For every entry of the corpus directory:

- `valid-<slug>.json`: `plancert verify --format json FILE [--parent FILE.parent.json]`
  must exit 0 with verdict "accepted" and no diagnostics;
- `<ID>-<slug>.json`: the same command must exit with the exit code of the ID's
  family (spec/obligations/<FAMILY>.json "exit_code": 2 for IO, JSON, SCHEMA,
  CONFIG, else 1), report the ID, and -- for exit-code-1 families -- report no
  other code: the input breaks exactly that obligation. An exit-code-2 run must
  report exactly one diagnostic (decoding and loading stop at the first finding);
- `<ID>-<slug>.args`: a sidecar {"args": [...], "exit": N} naming the plancert
  arguments to run instead (`{corpus}` = the corpus directory); its input files,
  if any, are the other `<ID>-<slug>.*` files. A sidecar may list under "also"
  (with a reason under "why") codes that every input breaking the ID breaks too
  (QUEUE-4 implies a DEADLOCK-1 cycle): those are tolerated beside the ID; and
  under "generated" inputs too large to commit, which the runner writes with
  tools/make_corpus.py generated_input() into a temporary directory ({generated});
- `<ID>-<slug>.witness.json`: the entry is committed through the gate with that
  topological-order witness by the `corpus_gate` driver (--gate-tool), as
  `corpus_gate WITNESS PARENT FILE`.

Diagnostics are read from the `--format json` output when there is one, else from
the `error[CODE]` lines of stdout and stderr. A run that crashes (signal), exits 3,
or exceeds --timeout fails. Finally every live ID of the catalog must have at
least one entry. Prints one line per entry and "N passed, M failed"; exits 1 on
any failure, 2 on bad usage.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # make_corpus, for generated inputs
ID_RE = re.compile(r"^([A-Z][A-Z0-9]*-[0-9]+)-(.+)$")
ERROR_RE = re.compile(r"error\[([A-Z][A-Z0-9]*-[0-9]+)\]")
NOT_ENTRIES = {"README.md", "CMakeLists.txt"}
SIDE_SUFFIXES = (".parent.json", ".witness.json")


def load_catalog(spec: Path):
    """{id: family exit code} of the live IDs, and {family: exit code}."""
    live, families = {}, {}
    for f in sorted(spec.glob("*.json")):
        fam = json.loads(f.read_text(encoding="utf-8"))
        families[fam["family"]] = fam["exit_code"]
        for ob in fam["obligations"]:
            if "retired" not in ob:
                live[ob["id"]] = fam["exit_code"]
    return live, families


def stem_of(name: str) -> str:
    for suf in SIDE_SUFFIXES + (".args", ".json"):
        if name.endswith(suf):
            return name[: -len(suf)]
    return name.rsplit(".", 1)[0] if "." in name else name


class Entry:
    def __init__(self, name: str, oid: str | None, cmd_kind: str):
        self.name, self.oid, self.kind = name, oid, cmd_kind  # kind: verify | args | gate


def collect(corpus: Path):
    """Entries, and files that belong to no entry."""
    files = sorted(p.name for p in corpus.iterdir() if p.is_file())
    names = set(files)
    entries, used = [], set(NOT_ENTRIES)
    for n in files:
        if n.endswith(".cpp"):
            used.add(n)
            continue
        if n.endswith(SIDE_SUFFIXES) or n in NOT_ENTRIES:
            continue
        stem = stem_of(n)
        m = ID_RE.match(stem)
        if n.endswith(".args"):
            if not m:
                continue
            entries.append(Entry(n, m.group(1), "args"))
            used.update(x for x in names if stem_of(x) == stem)
        elif n.endswith(".json") and stem + ".args" not in names:
            if stem.startswith("valid-"):
                entries.append(Entry(n, None, "verify"))
            elif m:
                entries.append(Entry(n, m.group(1), "gate" if stem + ".witness.json" in names else "verify"))
            else:
                continue
            used.add(n)
            used.update(stem + s for s in SIDE_SUFFIXES if stem + s in names)
    orphans = [n for n in files if n not in used]
    return entries, orphans


def codes_of(stdout: str, stderr: str):
    """(diagnostic codes, verdict or None, stdout parsed as JSON?)."""
    text = stdout.strip()
    if text.startswith("{"):
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and "diagnostics" in doc:
            return [d.get("code") for d in doc["diagnostics"]], doc.get("verdict"), True
    return ERROR_RE.findall(stdout + "\n" + stderr), None, False


def run_entry(e: Entry, args, corpus: Path, live: dict):
    """Returns (ok, detail line)."""
    stem = stem_of(e.name)
    side = json.loads((corpus / e.name).read_text(encoding="utf-8")) if e.kind == "args" else {}
    if e.kind == "args":
        gen_dir = ""
        if side.get("generated"):  # inputs too large to commit, written by tools/make_corpus.py
            gen_dir = tempfile.mkdtemp(prefix="plancert-corpus-")
            import make_corpus  # noqa: PLC0415 (only needed here)
            for name in side["generated"]:
                Path(gen_dir, name).write_bytes(make_corpus.generated_input(name))
        argv = [args.plancert] + [a.replace("{corpus}", str(corpus)).replace("{generated}", gen_dir) for a in side["args"]]
    elif e.kind == "gate":
        if not args.gate_tool:
            return False, "needs --gate-tool (a topological-order witness is checked only by the gate)"
        argv = [args.gate_tool, str(corpus / (stem + ".witness.json")), str(corpus / (stem + ".parent.json")), str(corpus / e.name)]
    else:
        argv = [args.plancert, "verify", "--format", "json", str(corpus / e.name)]
        if (corpus / (stem + ".parent.json")).exists():
            argv += ["--parent", str(corpus / (stem + ".parent.json"))]
    t0 = time.monotonic()
    try:
        r = subprocess.run(argv, capture_output=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {args.timeout} s: {' '.join(argv)}"
    finally:
        if e.kind == "args" and gen_dir:
            shutil.rmtree(gen_dir, ignore_errors=True)
    dt = time.monotonic() - t0
    out, err = r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")
    codes, verdict, as_json = codes_of(out, err)
    rc = r.returncode
    where = f"exit {rc}, codes [{', '.join(codes)}], {dt:.2f} s"

    def fail(why):
        tail = (err.strip() or out.strip()).splitlines()
        return False, f"{why} ({where}){': ' + tail[0][:200] if tail else ''}"

    if rc < 0:
        return fail(f"killed by signal {-rc}")
    json_wanted = "--format" in argv and "json" in argv
    if json_wanted and not as_json:
        return fail("--format json output is not a JSON object with diagnostics")
    if e.oid is None:  # a valid snapshot
        if rc != 0 or verdict != "accepted" or codes:
            return fail("a valid snapshot must be accepted")
        return True, where
    if e.oid not in live:
        return fail(f"{e.oid} is not a live obligation ID of the catalog")
    want = live[e.oid]
    if "exit" in side and side["exit"] != want:
        return fail(f"sidecar expects exit {side['exit']}, the catalog says {want} for {e.oid}")
    if rc != want:
        return fail(f"expected exit {want}")
    if e.oid not in codes:
        return fail(f"{e.oid} not reported")
    if as_json and verdict != "rejected":
        return fail("verdict must be rejected")
    also = set(side.get("also", []))
    if also and not side.get("why"):
        return fail("a sidecar that lists \"also\" codes must say \"why\"")
    others = sorted(set(c for c in codes if c != e.oid) - also)
    if want == 1 and others:
        return fail(f"breaks more than {e.oid}: also {', '.join(others)}")
    if also:
        where += f"; also {', '.join(sorted(also))} by necessity (sidecar)"
    if want == 2 and len(codes) != 1:
        return fail("an exit-code-2 input must be reported by exactly one diagnostic")
    return True, where


def main() -> int:
    ap = argparse.ArgumentParser(description="Runs the negative corpus against plancert.")
    ap.add_argument("--plancert", required=True, help="the plancert binary")
    ap.add_argument("--corpus", type=Path, required=True, help="the corpus directory (tests/corpus)")
    ap.add_argument("--gate-tool", help="the corpus_gate driver (entries with a .witness.json)")
    ap.add_argument("--spec", type=Path, default=ROOT / "spec" / "obligations", help="obligation catalog directory")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per run (default 60)")
    args = ap.parse_args()
    if not args.corpus.is_dir() or not args.spec.is_dir():
        print("run_corpus.py: --corpus and --spec must be directories", file=sys.stderr)
        return 2
    corpus = args.corpus.resolve()
    live, _ = load_catalog(args.spec)
    entries, orphans = collect(corpus)
    passed = failed = 0
    for e in entries:
        ok, detail = run_entry(e, args, corpus, live)
        print(f"{'ok  ' if ok else 'FAIL'} {e.name}: {detail}", flush=True)
        passed, failed = passed + ok, failed + (not ok)
    for n in orphans:
        print(f"FAIL {n}: belongs to no corpus entry (no <stem>.json or <stem>.args beside it)")
        failed += 1
    covered = {e.oid for e in entries if e.oid}
    for oid in sorted(set(live) - covered, key=lambda s: (s.split("-")[0], int(s.split("-")[1]))):
        print(f"FAIL {oid}: no corpus entry {oid}-*.json or {oid}-*.args")
        failed += 1
    print(f"{passed} passed, {failed} failed ({len(entries)} entries, {len(covered)} of {len(live)} obligation IDs covered)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
