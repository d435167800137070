#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the obligation catalog of spec/obligations/*.json as a reST fragment.

    /usr/bin/python3 tools/gen_catalog.py --spec spec --out build/docs/gen/catalog.rst

The fragment has no page title (docs/catalog.rst includes it below its own):
an overview table, then one section per family underlined with '-', and for
each obligation a definition block preceded by the label ``obligation-<ID>``.
Link to one from any page with an explicit title (the label does not precede
a section):  :ref:`DAG-2 <obligation-DAG-2>`; a family section has the label
``obligation-family-<FAMILY>`` and can be linked without a title.

All catalog text is escaped, so it may contain reST markup characters; IDs of
other obligations mentioned in a rule or witness become links. Stdlib only;
exit code 0 on success, 1 for a malformed catalog, 2 for bad usage.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import unicodedata
from pathlib import Path

# Pipeline order (ARCHITECTURE.md): input, decoding, common structure, layers, configuration.
ORDER = ["IO", "JSON", "SCHEMA", "DIGEST", "ID", "REF", "DAG", "LINEAGE", "ATTR", "FLOW", "MESH", "COLL", "P2P", "SCHED",
         "SHARD", "VOL", "WORK", "BUF", "MEM", "ALIGN", "CAP", "QUEUE", "SLOT", "ROUTE", "TOKEN", "DEADLOCK", "TIME", "MACHINE",
         "OBS", "CONFIG"]
FAMILY_KEYS = {"family", "title", "summary", "applies_to", "exit_code", "obligations"}
OBLIGATION_KEYS = {"id", "title", "rule", "witness", "complexity", "checked_by"}
EXIT_MEANING = {
    1: "rejected: the snapshot or transition violates the obligation",
    2: "malformed input: the input cannot be read or decoded, nothing is verified",
}
TOKEN = re.compile(
    r"(?P<id>(?<![A-Za-z0-9_-])[A-Z][A-Z0-9]*-[1-9][0-9]*(?![0-9A-Za-z_]))"  # an obligation ID
    r"|(?P<opt>(?<![\w-])--[A-Za-z][\w-]*(?:=\w+)?)"  # a command-line option
    r"|(?P<ptr>(?<![\w.])/(?:payload|parents|digest|version|schema|<)[\w/<>~-]*(?<![-/]))")  # a JSON Pointer
# Characters with a markup meaning somewhere in reST inline text.
MARKUP = set("\\`*_|[]<>:")


class CatalogError(Exception):
    pass


def _no_dup(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise CatalogError(f"duplicate key {k!r}")
        out[k] = v
    return out


def load(spec: Path):
    files = sorted((spec / "obligations").glob("*.json"))
    if not files:
        raise CatalogError(f"no catalog files in {spec / 'obligations'}")
    fams = []
    for f in files:
        try:
            data = json.loads(f.read_text(encoding="utf-8"), object_pairs_hook=_no_dup)
        except (ValueError, CatalogError) as e:
            raise CatalogError(f"{f}: {e}") from None
        if not isinstance(data, dict) or set(data) != FAMILY_KEYS:
            raise CatalogError(f"{f}: keys must be exactly {sorted(FAMILY_KEYS)}")
        for ob in data["obligations"]:
            if not isinstance(ob, dict) or not OBLIGATION_KEYS <= set(ob) or not set(ob) <= OBLIGATION_KEYS | {"retired"}:
                raise CatalogError(f"{f}: every obligation needs exactly the keys {sorted(OBLIGATION_KEYS)} (and optionally 'retired')")
            for k, v in ob.items():
                if not isinstance(v, str):
                    raise CatalogError(f"{f}: {ob.get('id')}: {k} must be a string")
        fams.append(data)
    rank = {f: i for i, f in enumerate(ORDER)}
    fams.sort(key=lambda d: (rank.get(d["family"], len(ORDER)), d["family"]))
    return fams


def width(s: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def esc(text: str) -> str:
    """Inline reST text that renders as `text` literally."""
    out = "".join("\\" + c if c in MARKUP else c for c in text)
    # A leading bullet, enumerator, comment or directive marker would start a block.
    if re.match(r"(\(?[A-Za-z0-9#]{1,3}[.)]|[-+*•=.#])(\s|$)", text) or text.startswith(".."):
        out = "\\" + out if out[:1] != "\\" else out
    return out


def linked(text: str, ids: set[str], self_id: str | None = None) -> str:
    """Escaped text in which the IDs of other catalog obligations become :ref: links and
    command-line options (--parent) and JSON Pointers (/payload/...) inline literals."""
    out, last = [], 0
    for m in TOKEN.finditer(text):
        tok = m.group(0)
        if m.group("id"):
            if tok not in ids or tok == self_id:
                continue
            markup = f":ref:`{tok} <obligation-{tok}>`"
        else:
            markup = f"``{tok}``"
        out.append(esc(text[last:m.start()]))
        before = text[m.start() - 1] if m.start() > 0 else ""
        if before and not before.isspace():
            markup = "\\ " + markup
        after = text[m.end()] if m.end() < len(text) else ""
        if after and not after.isspace():
            markup += "\\ "
        out.append(markup)
        last = m.end()
    out.append(esc(text[last:]))
    return "".join(out)


def literal(text: str) -> str:
    text = text.strip()
    if not text or "``" in text or text.startswith("`") or text.endswith("`"):
        return esc(text)
    return f"``{text}``"


def render(fams) -> str:
    ids = {ob["id"] for d in fams for ob in d["obligations"]}
    L: list[str] = []
    L += [".. This fragment is generated by tools/gen_catalog.py from spec/obligations/*.json; edit those files, not this one.", ""]
    n = sum(len(d["obligations"]) for d in fams)
    live = sum(1 for d in fams for ob in d["obligations"] if "retired" not in ob)
    L += [f"The catalog has {live} obligations in {len(fams)} families"
          + (f" (and {n - live} retired IDs, which are never reused)" if n != live else "")
          + ". A diagnostic's code is the ID of the obligation that failed. Exit code 1 means rejected: an obligation failed; "
            "exit code 2 means malformed input: the input could not be read or decoded, so nothing was verified. "
            "Transition obligations are checked only against the parent snapshot (``plancert verify SNAPSHOT --parent PARENT``, "
            "or the gate's commit).", ""]
    L += [".. list-table:: Obligation families", "   :header-rows: 1", "   :widths: 14 36 10 40", "",
          "   * - Family", "     - Title", "     - Exit code", "     - Obligations"]
    for d in fams:
        fam = d["family"]
        L += [f"   * - :ref:`{fam} <obligation-family-{fam}>`", f"     - {esc(d['title'])}", f"     - {d['exit_code']}",
              "     - " + ", ".join(f":ref:`{ob['id']} <obligation-{ob['id']}>`" for ob in d["obligations"])]
    L.append("")
    for d in fams:
        fam = d["family"]
        title = esc(f"{fam}: {d['title']}")
        L += [f".. _obligation-family-{fam}:", "", title, "-" * max(width(title), 3), ""]
        L += [linked(d["summary"], ids), ""]
        applies = ", ".join(f"``{a}``" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", a) else esc(a) for a in d["applies_to"])
        meaning = EXIT_MEANING.get(d["exit_code"], "")
        L += [f":Applies to: {applies}", f":Exit code: {d['exit_code']}" + (f" ({esc(meaning)})" if meaning else ""), ""]
        for ob in d["obligations"]:
            oid = ob["id"]
            term = f"``{oid}`` — {esc(ob['title'])}"
            if "retired" in ob:
                term += f" (retired: {esc(ob['retired'])})"
            L += [f".. _obligation-{oid}:", "", term]
            L += [f"   :Rule: {linked(ob['rule'], ids, oid)}",
                  f"   :Witness: {linked(ob['witness'], ids, oid)}",
                  f"   :Complexity: {linked(ob['complexity'], ids, oid)}",
                  "   :Checked by: " + "; ".join(literal(p) for p in ob["checked_by"].split(";") if p.strip()), ""]
    return "\n".join(L).rstrip("\n") + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Write the obligation catalog as a reST fragment.")
    ap.add_argument("--spec", type=Path, required=True, help="the spec/ directory (with obligations/*.json)")
    ap.add_argument("--out", type=Path, required=True, help="the .rst file to write")
    args = ap.parse_args(argv)
    try:
        text = render(load(args.spec))
    except CatalogError as e:
        print(f"gen_catalog: {e}", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    # Write to a temporary file and rename: an interrupted run leaves no partial output.
    fd, tmp = tempfile.mkstemp(prefix=".catalog-", suffix=".rst", dir=args.out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, args.out)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
