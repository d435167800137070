#!/usr/bin/env python3
"""Architecture check (ctest label `arch`): the dependency rule and the trusted-base size.

Rule (ARCHITECTURE.md): core <- verifiers <- proofs; passes -> core + verifiers/gate.h;
nothing in core/, verifiers/ or proofs/ includes passes/, props/, tests/ or cli/; only one
.cpp (in proofs/) includes z3++.h. The trusted base (non-blank, non-comment lines of core/ +
verifiers/ + proofs/) must stay under the limit.
"""
import argparse
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
ALLOWED = {
    "core": {"core"},
    "verifiers": {"core", "verifiers"},
    "proofs": {"core", "verifiers", "proofs"},
}
PROJECT_DIRS = {"core", "verifiers", "proofs", "passes", "props", "tests", "cli", "spec", "bench"}


def code_lines(text):
    """Counts non-blank, non-comment lines (// and /* */ comments removed)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    n = 0
    for line in text.splitlines():
        line = line.split("//", 1)[0].strip()
        if line:
            n += 1
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--limit", type=int, default=4000)
    a = ap.parse_args()
    root = pathlib.Path(a.root)
    problems = []
    sources = [p for d in PROJECT_DIRS for p in (root / d).rglob("*") if p.suffix in (".h", ".hpp", ".cpp", ".cc")]
    z3_users = []
    for p in sources:
        top = p.relative_to(root).parts[0]
        text = p.read_text(encoding="utf-8", errors="replace")
        for inc in INCLUDE.findall(text):
            first = inc.split("/", 1)[0]
            if inc.startswith("z3"):
                z3_users.append(p.relative_to(root))
            if first not in PROJECT_DIRS:
                continue
            if top in ALLOWED and first not in ALLOWED[top]:
                problems.append(f"{p.relative_to(root)}: trusted {top}/ includes {inc}")
            if top == "passes" and first not in ("core", "passes", "spec") and inc != "verifiers/gate.h":
                problems.append(f"{p.relative_to(root)}: passes/ may include core/ and verifiers/gate.h only, not {inc}")
    if len(z3_users) > 1 or any(u.parts[0] != "proofs" or u.suffix != ".cpp" for u in z3_users):
        problems.append("z3 headers must be included by exactly one .cpp in proofs/, found: " + ", ".join(map(str, z3_users)))
    tcb = sum(code_lines(p.read_text(encoding="utf-8", errors="replace")) for d in ("core", "verifiers", "proofs")
              for p in (root / d).rglob("*") if p.suffix in (".h", ".hpp", ".cpp"))
    print(f"trusted base (core/ + verifiers/ + proofs/): {tcb} non-blank, non-comment lines (limit {a.limit})")
    if tcb >= a.limit:
        problems.append(f"trusted base is {tcb} lines, over the limit of {a.limit}")
    for pr in problems:
        print("error:", pr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
