#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the generated pages of the manual (ctest docs_generated, label docs).

    check_generated.py --root SRC --docgen BIN --plancert BIN --work DIR

Runs the generators into DIR exactly as the docs target does (plancert-docgen for the
formulas, CLI and IR pages, tools/gen_catalog.py for the obligation catalog) and checks:
  - every pass of the registry (plancert-docgen passes) has its section on the formulas page,
    with at least one `.. math::` block and a `doxygenfunction` directive; its header exists
    and names the pass and the implementing function (no placeholder passes);
  - every obligation ID of spec/obligations/*.json is on the generated catalog, with its label;
  - every subcommand that `plancert --help` lists has its section on the CLI page;
  - every spec/schemas/*.schema.json has its section on the IR page.
Exit code 0 when all hold, 1 otherwise. Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path


def run(cmd: list[str]) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"error: {' '.join(cmd)} exited with {r.returncode}:\n{r.stdout}{r.stderr}")
    return r.stdout


def sections(text: str) -> dict[str, str]:
    """Body of every section that starts with a label `.. _NAME:`, up to the next label of the same kind."""
    out: dict[str, str] = {}
    labels = list(re.finditer(r"^\.\. _([A-Za-z0-9_.+-]+):\s*$", text, re.M))
    for i, m in enumerate(labels):
        end = labels[i + 1].start() if i + 1 < len(labels) else len(text)
        out[m.group(1)] = text[m.end():end]
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--docgen", required=True)
    ap.add_argument("--plancert", required=True)
    ap.add_argument("--work", type=Path, required=True)
    a = ap.parse_args()
    a.work.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []

    # --- formulas page --------------------------------------------------------------------
    formulas = a.work / "formulas.rst"
    run([a.docgen, "formulas", "--out", str(formulas)])
    text = formulas.read_text(encoding="utf-8")
    secs = sections(text)
    passes = [p for p in run([a.docgen, "passes"]).split() if p]
    if not passes:
        problems.append("the pass registry is empty")
    for p in passes:
        body = secs.get(f"pass-{p}")
        if body is None:
            problems.append(f"formulas page: no section for pass {p}")
            continue
        # The pass section runs up to the next pass section; formula labels split it, so join them.
        keys = list(secs)
        i = keys.index(f"pass-{p}")
        whole = body
        for k in keys[i + 1:]:
            if k.startswith("pass-"):
                break
            whole += secs[k]
        if ".. math::" not in whole:
            problems.append(f"formulas page: pass {p} has no math block")
        m = re.search(r"^\.\. doxygenfunction:: (\S+)$", whole, re.M)
        if not m:
            problems.append(f"formulas page: pass {p} has no doxygenfunction directive")
            continue
        header = re.search(r":Implemented by: ``[^`]+`` \(``([^`]+)``\)", whole)
        if not header:
            problems.append(f"formulas page: pass {p} names no header")
            continue
        hpath = a.root / header.group(1)
        if not hpath.is_file():
            problems.append(f"pass {p}: header {header.group(1)} does not exist")
            continue
        htext = hpath.read_text(encoding="utf-8")
        func = m.group(1).split("::")[-1]
        if p not in htext:
            problems.append(f"pass {p}: {header.group(1)} does not mention the pass name")
        if not re.search(rf"\b{re.escape(func)}\s*\(", htext):
            problems.append(f"pass {p}: {header.group(1)} does not declare {func}()")
    if len(re.findall(r"^\.\. math::", text, re.M)) < len(passes):
        problems.append("formulas page: fewer math blocks than passes")

    # --- obligation catalog ---------------------------------------------------------------
    catalog = a.work / "catalog.rst"
    run(["/usr/bin/python3", str(a.root / "tools" / "gen_catalog.py"), "--spec", str(a.root / "spec"), "--out", str(catalog)])
    ctext = catalog.read_text(encoding="utf-8")
    ids = []
    for f in sorted((a.root / "spec" / "obligations").glob("*.json")):
        ids += [o["id"] for o in json.loads(f.read_text(encoding="utf-8"))["obligations"]]
    if not ids:
        problems.append("spec/obligations has no obligation")
    for oid in ids:
        if f".. _obligation-{oid}:" not in ctext or f"``{oid}``" not in ctext:
            problems.append(f"catalog: obligation {oid} is missing")
    # The formulas page links the gate's obligations into the catalog: those must exist too.
    for oid in set(re.findall(r"<obligation-([A-Z0-9]+-[0-9]+)>", text)):
        if oid not in ids:
            problems.append(f"formulas page: links obligation {oid}, which spec/ does not define")

    # --- CLI reference --------------------------------------------------------------------
    cli = a.work / "cli.rst"
    run([a.docgen, "cli", "--plancert", a.plancert, "--out", str(cli)])
    cltext = cli.read_text(encoding="utf-8")
    top = run([a.plancert, "--help"])
    listed = re.search(r"^(?:Subcommands|SUBCOMMANDS):\n((?:  .*\n?)+)", top, re.M)
    cmds = [l.split()[0] for l in listed.group(1).splitlines()] if listed else []
    if not cmds:
        problems.append("plancert --help lists no subcommand")
    for c in cmds:
        if f".. _cli-{c}:" not in cltext or f"$ plancert {c} --help" not in cltext:
            problems.append(f"CLI page: subcommand {c} is missing")

    # --- IR reference ---------------------------------------------------------------------
    ir = a.work / "schemas.rst"
    run([a.docgen, "schemas", "--schemas", str(a.root / "spec" / "schemas"), "--out", str(ir)])
    itext = ir.read_text(encoding="utf-8")
    for f in sorted((a.root / "spec" / "schemas").glob("*.schema.json")):
        name = f.name[: -len(".schema.json")]
        if f".. _schema-{name}:" not in itext:
            problems.append(f"IR page: schema {name} is missing")

    for p in problems:
        print("error:", p)
    print(f"{len(passes)} passes, {len(ids)} obligations, {len(cmds)} subcommands checked; {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
