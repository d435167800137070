#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Consistency check of the normative obligation catalog (spec/) against the code.

Run with Debian's interpreter (stdlib only; python3-jsonschema is used in
addition when it is installed):

    /usr/bin/python3 tools/check_spec.py [--root DIR] [--require-corpus]
    /usr/bin/python3 tools/check_spec.py --snapshot FILE...   # validate snapshot files
    /usr/bin/python3 tools/check_spec.py --write-schemas      # regenerate spec/schemas/

Parts (each problem is listed; the exit code is 1 if there is any):
  (a) catalog format: every spec/obligations/<FAMILY>.json has exactly the
      documented keys; IDs are FAMILY-1..FAMILY-k without gaps, unique; the
      files named in checked_by exist; every family that cli/commands.h
      exit_for_code() maps to exit code 2 has exit_code 2 (the converse, an
      exit-code-2 family that exit_for_code() does not know, is reported and
      fails only with --strict-exit-codes);
  (b) code: every obligation-ID string literal ("DAG-2", "P2P-1") in the .cpp/.h files
      of core/ verifiers/ proofs/ passes/ cli/ is a live catalog ID, and every
      live catalog ID occurs in such a literal (IDs of the exit-code-2 families,
      e.g. JSON, SCHEMA, CONFIG, only need to occur somewhere in that code);
  (c) corpus: every live ID has a file tests/corpus/<ID>-*.json (any
      extension is accepted for inputs that are not JSON). Reported only;
      a failure only with --require-corpus;
  (d) schemas: spec/schemas/<Schema>.schema.json exists for each IR schema of
      core/ir.h, uses only the JSON Schema subset validated here, and agrees
      with the field lists, member types and enum spellings of core/ir.h;
      every snapshot file under examples/ and every tests/corpus/valid-*.json
      snapshot conforms to its schema and its digest recomputes.

Exit codes: 0 consistent, 1 problems found, 2 bad usage.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import re
import sys
from pathlib import Path

DRAFT = "https://json-schema.org/draft/2020-12/schema"
FAMILY_KEYS = ["family", "title", "summary", "applies_to", "exit_code", "obligations"]
OBLIGATION_KEYS = ["id", "title", "rule", "witness", "complexity", "checked_by"]
OPTIONAL_OBLIGATION_KEYS = ["retired"]
BAD_INPUT_FAMILIES_DEFAULT = {"JSON", "SCHEMA", "CONFIG"}
CODE_DIRS = ["core", "verifiers", "proofs", "passes", "cli"]
CODE_SUFFIXES = {".cpp", ".h", ".hpp", ".cc"}
# String literals of the ID shape that are not obligation IDs ("UTF-8", ...).
NOT_OBLIGATION_PREFIXES = {"UTF", "UCS", "SHA", "SHA3", "RFC", "ISO", "IEC", "IEEE", "ECMA", "BLAKE2B", "X86", "ARM64"}
ID_RE = re.compile(r"^([A-Z][A-Z0-9]*)-([1-9][0-9]*)$")
# Families are upper-case letters and digits starting with a letter (P2P); the brief's
# "[A-Z]+-[0-9]+" would miss P2P-1.
LITERAL_ID_RE = re.compile(r"^[A-Z][A-Z0-9]*-[0-9]+$")
ANNOTATIONS = {"title", "description", "$comment", "examples"}
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
ARRAY_MAX = 2**31 - 1  # the most elements (entries of an Attrs object) the decoder accepts in any array: every position is an Index (SCHEMA-8)
SOFT_EXIT = "(a) exit_for_code() classes"


class Problems:
    """Problems grouped by part; `soft` parts only fail when required."""

    def __init__(self) -> None:
        self.items: dict[str, list[str]] = {}
        self.notes: dict[str, list[str]] = {}

    def add(self, part: str, msg: str) -> None:
        self.items.setdefault(part, []).append(msg)

    def note(self, part: str, msg: str) -> None:
        self.notes.setdefault(part, []).append(msg)


# ---------------------------------------------------------------------------
# strict JSON loading

class StrictJsonError(ValueError):
    pass


def _no_dup_pairs(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise StrictJsonError(f"duplicate key {k!r}")
        out[k] = v
    return out


def _no_float(text):
    raise StrictJsonError(f"JSON float {text}")


def _no_constant(text):
    raise StrictJsonError(f"non-JSON constant {text}")


def load_strict(path: Path):
    """Parses a JSON file: UTF-8, no duplicate keys, no floats, no NaN/Infinity."""
    text = path.read_bytes().decode("utf-8")
    return json.loads(text, object_pairs_hook=_no_dup_pairs, parse_float=_no_float, parse_constant=_no_constant)


# ---------------------------------------------------------------------------
# (a) catalog format

def _is_text(v) -> bool:
    return isinstance(v, str) and v != "" and v == v.strip() and "\n" not in v and "\r" not in v


def load_catalog(root: Path, problems: Problems):
    """Returns {family: data} of the well-formed spec files (problems for the rest)."""
    part = "(a) catalog format"
    spec_dir = root / "spec" / "obligations"
    files = sorted(spec_dir.glob("*.json")) if spec_dir.is_dir() else []
    if not files:
        problems.add(part, f"no catalog files in {spec_dir}")
        return {}
    catalog = {}
    for path in files:
        rel = path.relative_to(root)
        try:
            data = load_strict(path)
        except (ValueError, UnicodeDecodeError) as e:
            problems.add(part, f"{rel}: not strict JSON: {e}")
            continue
        if not isinstance(data, dict):
            problems.add(part, f"{rel}: must be a JSON object")
            continue
        keys = list(data.keys())
        if set(keys) != set(FAMILY_KEYS):
            missing = [k for k in FAMILY_KEYS if k not in data]
            extra = [k for k in keys if k not in FAMILY_KEYS]
            problems.add(part, f"{rel}: keys must be exactly {FAMILY_KEYS}" + (f"; missing {missing}" if missing else "") + (f"; unknown {extra}" if extra else ""))
        fam = data.get("family")
        if not (isinstance(fam, str) and re.fullmatch(r"[A-Z][A-Z0-9]*", fam)):
            problems.add(part, f"{rel}: family must be upper-case letters and digits, starting with a letter, got {fam!r}")
            continue
        if path.stem != fam:
            problems.add(part, f"{rel}: file name must be {fam}.json")
        for k in ("title", "summary"):
            if k in data and not _is_text(data[k]):
                problems.add(part, f"{rel}: {k} must be a non-empty one-paragraph string without surrounding whitespace")
        at = data.get("applies_to")
        if not (isinstance(at, list) and at and all(_is_text(x) for x in at) and len(set(at)) == len(at)):
            problems.add(part, f"{rel}: applies_to must be a non-empty list of distinct non-empty strings")
        ec = data.get("exit_code")
        if type(ec) is not int or ec not in (1, 2):
            problems.add(part, f"{rel}: exit_code must be 1 (rejected) or 2 (malformed input), got {ec!r}")
        obs = data.get("obligations")
        if not (isinstance(obs, list) and obs):
            problems.add(part, f"{rel}: obligations must be a non-empty list")
            continue
        seen = set()
        for n, ob in enumerate(obs, start=1):
            where = f"{rel}: obligations[{n - 1}]"
            if not isinstance(ob, dict):
                problems.add(part, f"{where}: must be an object")
                continue
            oid = ob.get("id")
            if isinstance(oid, str):
                where = f"{rel}: {oid}"
            allowed = set(OBLIGATION_KEYS) | set(OPTIONAL_OBLIGATION_KEYS)
            if not set(OBLIGATION_KEYS) <= set(ob) or not set(ob) <= allowed:
                missing = [k for k in OBLIGATION_KEYS if k not in ob]
                extra = [k for k in ob if k not in allowed]
                problems.add(part, f"{where}: keys must be exactly {OBLIGATION_KEYS} (plus optional {OPTIONAL_OBLIGATION_KEYS})" + (f"; missing {missing}" if missing else "") + (f"; unknown {extra}" if extra else ""))
            for k in OBLIGATION_KEYS + [k for k in OPTIONAL_OBLIGATION_KEYS if k in ob]:
                if k in ob and not _is_text(ob[k]):
                    problems.add(part, f"{where}: {k} must be a non-empty one-paragraph string without surrounding whitespace")
            m = ID_RE.match(oid) if isinstance(oid, str) else None
            if not m or m.group(1) != fam:
                problems.add(part, f"{where}: id must be {fam}-<n>, got {oid!r}")
                continue
            if oid in seen:
                problems.add(part, f"{where}: id is listed twice")
            seen.add(oid)
            if int(m.group(2)) != n:
                problems.add(part, f"{where}: ids must be numbered {fam}-1..{fam}-{len(obs)} in order without gaps; entry {n} is {oid}")
            cb = ob.get("checked_by")
            if isinstance(cb, str) and "retired" not in ob:
                for f in re.findall(r"\b((?:core|verifiers|proofs|passes|cli|spec|tools)/[\w./-]+\.(?:h|cpp|py|json))\b", cb):
                    if not (root / f).is_file():
                        problems.add(part, f"{where}: checked_by names {f}, which does not exist")
        catalog[fam] = data  # also when malformed: the other parts use what they can
    return catalog


def catalog_ids(catalog):
    """(live ids, retired ids, {id: exit_code})."""
    live, retired, exit_of = set(), set(), {}
    for fam, data in catalog.items():
        for ob in data.get("obligations") or []:
            if isinstance(ob, dict) and isinstance(ob.get("id"), str):
                (retired if "retired" in ob else live).add(ob["id"])
                exit_of[ob["id"]] = data.get("exit_code")
    return live, retired, exit_of


def check_exit_classes(root: Path, catalog, problems: Problems) -> None:
    part = "(a) catalog format"
    verify = root / "cli" / "commands.h"
    bad_input = None
    if verify.is_file():
        text = verify.read_text(encoding="utf-8", errors="replace")
        m = re.search(r"exit_for_code\s*\([^)]*\)\s*\{(.*?)\n\}", text, re.S)
        if m:
            prefixes = re.findall(r'"([A-Z][A-Z0-9]*)-"', m.group(1))
            if prefixes:
                bad_input = set(prefixes)
    if bad_input is None:
        problems.note(part, "could not read the exit-code-2 prefixes from cli/commands.h exit_for_code(); assuming JSON, SCHEMA, CONFIG")
        bad_input = BAD_INPUT_FAMILIES_DEFAULT
    for fam, data in sorted(catalog.items()):
        if fam in bad_input and data.get("exit_code") != 2:
            problems.add(part, f"spec/obligations/{fam}.json: exit_code is {data.get('exit_code')!r} but cli/commands.h exit_for_code() gives 2 for {fam}-*")
        elif fam not in bad_input and data.get("exit_code") == 2:
            # Codes thrown as InputError outside the verifiers (e.g. by cli/) exit 2 without
            # exit_for_code(); reported, but only a failure with --strict-exit-codes.
            problems.add(SOFT_EXIT, f"spec/obligations/{fam}.json: exit_code is 2 but cli/commands.h exit_for_code() gives 1 for {fam}-* (add \"{fam}-\" to its exit-code-2 prefixes)")
    for fam in sorted(bad_input - set(catalog)):
        problems.add(part, f"exit_for_code() maps {fam}-* to exit code 2 but the catalog has no family {fam}")
    return bad_input | {f for f, d in catalog.items() if d.get("exit_code") == 2}


# ---------------------------------------------------------------------------
# (b) code literals

_RAW_RE = re.compile(r'(?:u8|u|U|L)?R"([^()\\\s"]{0,16})\(')


def cpp_string_literals(text: str):
    """Yields (contents, line) of every string literal outside comments."""
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            end = n if j < 0 else j + 2
            line += text.count("\n", i, end)
            i = end
            continue
        if c in "uULR" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = _RAW_RE.match(text, i)
            if m:
                close = ")" + m.group(1) + '"'
                j = text.find(close, m.end())
                end = n if j < 0 else j
                yield text[m.end():end], line
                stop = n if j < 0 else j + len(close)
                line += text.count("\n", i, stop)
                i = stop
                continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            yield text[i + 1:min(j, n)], line
            i = j + 1
            continue
        if c == "'":
            if i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_") and not re.match(r"(?:u8|u|U|L)$", text[max(0, i - 2):i]):
                i += 1  # digit separator (1'000) or the like
                continue
            j = i + 1
            while j < n and text[j] != "'" and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        i += 1


def scan_code(root: Path):
    """({literal id: [(file, line)]}, concatenated code text)."""
    literals: dict[str, list[tuple[str, int]]] = {}
    texts = []
    for d in CODE_DIRS:
        base = root / d
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if path.suffix not in CODE_SUFFIXES or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            texts.append(text)
            rel = str(path.relative_to(root))
            for lit, line in cpp_string_literals(text):
                if LITERAL_ID_RE.match(lit):
                    literals.setdefault(lit, []).append((rel, line))
    return literals, "\n".join(texts)


def check_code(root: Path, catalog, bad_input, problems: Problems) -> None:
    part = "(b) code <-> catalog"
    live, retired, _ = catalog_ids(catalog)
    literals, text = scan_code(root)
    if not literals:
        problems.add(part, f"no obligation-ID literals found under {', '.join(CODE_DIRS)} (wrong --root?)")
        return
    for lit, where in sorted(literals.items()):
        fam = lit.split("-")[0]
        if fam in NOT_OBLIGATION_PREFIXES:
            continue
        locs = ", ".join(f"{f}:{l}" for f, l in where[:3]) + (" ..." if len(where) > 3 else "")
        if lit in retired:
            problems.add(part, f"{lit} is retired in the catalog but still emitted ({locs})")
        elif lit not in live:
            problems.add(part, f"{lit} is emitted by the code but not in the catalog ({locs})")
    for oid in sorted(live, key=_id_key):
        fam = oid.split("-")[0]
        if oid in literals:
            continue
        if fam in bad_input:
            if not re.search(r"(?<![A-Za-z0-9_-])" + re.escape(oid) + r"(?![0-9])", text):
                problems.add(part, f"{oid} (exit code 2) does not occur anywhere in the code of {', '.join(CODE_DIRS)}")
        else:
            problems.add(part, f"{oid} is in the catalog but no code emits it (no string literal \"{oid}\" in {', '.join(CODE_DIRS)})")


def _id_key(oid: str):
    fam, _, num = oid.partition("-")
    return (fam, int(num) if num.isdigit() else 0)


# ---------------------------------------------------------------------------
# (c) corpus

def check_corpus(root: Path, catalog, problems: Problems) -> None:
    part = "(c) corpus"
    live, retired, _ = catalog_ids(catalog)
    corpus = root / "tests" / "corpus"
    files = [p for p in corpus.rglob("*") if p.is_file()] if corpus.is_dir() else []
    have: dict[str, list[str]] = {}
    for p in files:
        m = re.match(r"([A-Z][A-Z0-9]*-[0-9]+)-.", p.name)
        if m:
            have.setdefault(m.group(1), []).append(str(p.relative_to(root)))
    missing: dict[str, list[str]] = {}
    for oid in sorted(live, key=_id_key):
        if oid not in have:
            missing.setdefault(oid.split("-")[0], []).append(oid)
    for fam, ids in sorted(missing.items()):
        problems.add(part, f"{fam}: no corpus file tests/corpus/<ID>-*.json for {', '.join(ids)}")
    for oid, paths in sorted(have.items()):
        if oid not in live and oid not in retired:
            problems.add(part, f"{paths[0]}: names {oid}, which is not in the catalog")
    problems.note(part, f"{len([o for o in live if o in have])} of {len(live)} live IDs have a corpus file")


# ---------------------------------------------------------------------------
# core/ir.h model (for the schema cross-check and --write-schemas)

class IrModel:
    def __init__(self) -> None:
        self.structs: dict[str, dict] = {}     # name -> {doc, fields: [(json, member, cpp_type, doc)]}
        self.enums: dict[str, dict] = {}       # name -> {doc, values: [...]}
        self.payloads: list[str] = []          # struct names with kSchema, in order
        self.aliases: dict[str, str] = {}


def _doc_before(text: str, pos: int) -> str:
    lines = text[:pos].rstrip("\n").split("\n")
    out = []
    while lines and lines[-1].strip().startswith("///"):
        out.append(lines.pop().strip()[3:].strip())
    return " ".join(reversed(out)).strip()


def parse_ir(root: Path) -> IrModel:
    text = (root / "core" / "ir.h").read_text(encoding="utf-8")
    ir = IrModel()
    for m in re.finditer(r"^using (\w+) = ([^;]+);", text, re.M):
        ir.aliases[m.group(1)] = m.group(2).strip()
    for m in re.finditer(r"^enum class (\w+) \{([^}]*)\};", text, re.M):
        ir.enums[m.group(1)] = {"doc": _doc_before(text, m.start()), "enumerators": [e.strip() for e in m.group(2).split(",") if e.strip()], "values": None}
    for m in re.finditer(r"^PLANCERT_ENUM_NAMES\(plancert::(\w+),\s*(.*?)\);", text, re.M):
        if m.group(1) in ir.enums:
            ir.enums[m.group(1)]["values"] = re.findall(r'"([^"]*)"', m.group(2))
    member_re = re.compile(r"^\s*(?P<type>[A-Za-z_][\w:<>, ]*?)\s+(?P<name>\w+)\s*(?:=[^;]*|\{[^;]*\})?;\s*(?:///<\s*(?P<doc>.*))?$")
    for m in re.finditer(r"^struct (\w+) \{\n(.*?)^\};", text, re.M | re.S):
        name, body = m.group(1), m.group(2)
        members = {}
        for line in body.split("\n"):
            if line.strip().startswith(("static", "//", "return")):
                continue
            mm = member_re.match(line)
            if mm:
                members[mm.group("name")] = (mm.group("type").strip(), (mm.group("doc") or "").strip())
        fields = []
        found = [fm.groups() for fm in re.finditer(r'field\("([^"]+)",\s*&(\w+)::(\w+)\)', body)]
        for pm in re.finditer(r"PLANCERT_FIELDS\((\w+),([^)]*)\)", body):  # JSON key = member name
            found += [(member, pm.group(1), member) for member in (x.strip() for x in pm.group(2).split(","))]
        for jname, cls, member in found:
            typ, doc = members.get(member, (None, ""))
            fields.append((jname, member, typ, doc))
        ks = re.search(r'kSchema\s*=\s*"(\w+)"', body)
        if ks:
            ir.payloads.append(name)
        ir.structs[name] = {"doc": _doc_before(text, m.start()), "fields": fields}
    return ir


def _ref(name: str) -> dict:
    return {"$ref": f"#/$defs/{name}"}


COMMON_DEFS = {
    "Digest": {"description": "Lowercase hex BLAKE2b-256 digest (DIGEST-2).", "type": "string", "pattern": "^[0-9a-f]{64}$"},
    "Id": {"description": "Entity id: 1 to 256 bytes from [A-Za-z0-9] and _ . : / # @ + - [ ] = , (ID-2); unique in the snapshot (ID-1).",
           "type": "string", "pattern": "^[A-Za-z0-9_.:/#@+\\-\\[\\]=,]{1,256}$"},
    "Int": {"description": "Exact integer as a canonical decimal string: no '+', no leading zero, no -0, at most 4096 digits (SCHEMA-7).",
            "type": "string", "pattern": "^(0|-?[1-9][0-9]*)$"},
    "Rat": {"description": "Exact rational as a string: a canonical integer, or p/q with p != 0, q > 1 and gcd(p, q) = 1 (lowest terms is not expressible here) (SCHEMA-7).",
            "type": "string", "pattern": "^(0|-?[1-9][0-9]*(/([2-9]|[1-9][0-9]+))?)$"},
    "Expr": {"description": "Exact symbolic quantity: the canonical text of a polynomial over Q with ceil/floor/max/min nodes, e.g. 3/2*B*S^2-7 (SCHEMA-7); at most 16384 characters (SCHEMA-8). The pattern only restricts the alphabet.",
             "type": "string", "minLength": 1, "maxLength": 16384, "pattern": "^[-+*/^(),0-9A-Za-z_]+$"},
    "Int64": {"description": "JSON integer in the signed 64-bit range (SCHEMA-8).", "type": "integer", "minimum": INT64_MIN, "maximum": INT64_MAX},
    "Index": {"description": "Index into an array of the same snapshot (REF-1), a JSON integer in the signed 32-bit range (SCHEMA-8).",
              "type": "integer", "minimum": -2**31, "maximum": 2**31 - 1},
    "Indices": {"description": "A list of indices.", "type": "array", "items": _ref("Index"), "maxItems": ARRAY_MAX},
    "Attrs": {"description": "Free-form string annotations; each layer reserves some names (ATTR-1).", "type": "object", "additionalProperties": {"type": "string"},
              "maxProperties": ARRAY_MAX},
}
LEAF_TYPES = {"Index", "Indices", "Attrs", "Int", "Rat", "Expr"}


def map_type(ir: IrModel, typ: str, jname: str | None = None) -> dict:
    typ = typ.strip()
    m = re.fullmatch(r"(std::vector|codec::List)<(.+)>", typ)
    if m:  # any array: at most 2^31 - 1 elements (core/codec.h decode, SCHEMA-8)
        return {"type": "array", "items": map_type(ir, m.group(2)), "maxItems": ARRAY_MAX}
    m = re.fullmatch(r"std::optional<(.+)>", typ)
    if m:
        return {"anyOf": [{"type": "null"}, map_type(ir, m.group(1))]}
    m = re.fullmatch(r"codec::Shared<(.+)>", typ)
    if m:  # a value copies share (core/codec.h): encoded as the value itself
        return map_type(ir, m.group(1), jname)
    if typ in ("std::string", "Name"):  # Name: an interned string (core/codec.h)
        return _ref("Id") if jname == "id" else {"type": "string"}
    if typ == "bool":
        return {"type": "boolean"}
    if typ == "std::int64_t":
        return _ref("Int64")
    if typ in LEAF_TYPES or typ in ir.enums or typ in ir.structs:
        return _ref(typ)
    raise ValueError(f"core/ir.h: no JSON Schema mapping for C++ type {typ!r}")


def expected_schema(ir: IrModel, payload: str, with_docs: bool) -> dict:
    """The schema of one snapshot file, derived from core/ir.h."""
    defs: dict[str, dict] = {}
    todo = [payload]
    while todo:
        name = todo.pop()
        if name in defs:
            continue
        if name in COMMON_DEFS:
            d = copy.deepcopy(COMMON_DEFS[name])
            if not with_docs:
                d.pop("description", None)
        elif name in ir.enums:
            e = ir.enums[name]
            d = ({"description": e["doc"]} if with_docs and e["doc"] else {}) | {"type": "string", "enum": list(e["values"] or [])}
        elif name in ir.structs:
            s = ir.structs[name]
            props = {}
            for jname, member, typ, doc in s["fields"]:
                if typ is None:
                    raise ValueError(f"core/ir.h: {name}::{member} (field {jname!r}) has no parsable declaration")
                p = map_type(ir, typ, jname)
                if with_docs and doc:
                    p = {"description": doc} | p
                props[jname] = p
            d = ({"description": s["doc"]} if with_docs and s["doc"] else {}) | {
                "type": "object", "additionalProperties": False, "required": [f[0] for f in s["fields"]], "properties": props}
        else:
            raise ValueError(f"unknown schema definition {name!r}")
        defs[name] = d
        todo.extend(re.findall(r'"\$ref": "#/\$defs/(\w+)"', json.dumps(d)))
    d = copy.deepcopy(COMMON_DEFS["Digest"])  # used by the envelope
    if not with_docs:
        d.pop("description", None)
    defs["Digest"] = d
    root = payload == "ModelIR"
    parents = {"type": "array", "items": _ref("Digest"), "maxItems": 0} if root else {"type": "array", "items": _ref("Digest"), "minItems": 1, "maxItems": 1}
    props = {
        "digest": _ref("Digest"),
        "parents": parents,
        "payload": _ref(payload),
        "schema": {"const": payload},
        "version": {"type": "string", "pattern": "^1\\.0\\."},
    }
    if with_docs:
        props["digest"] = {"description": "BLAKE2b-256 of plancert/ + schema + NUL + canonical JSON of payload (DIGEST-1)."} | props["digest"]
        props["parents"] = {"description": ("A ModelIR is a root: no parent (DIGEST-4)." if root else "Exactly one parent digest (DIGEST-4): the snapshot of the layer before (DIGEST-3, DIGEST-5).")} | parents
        props["version"] = {"description": "IR version; this build reads any string that begins with 1.0. (SCHEMA-2)."} | props["version"]
    out = {"$schema": DRAFT}
    if with_docs:
        out["title"] = f"{payload} snapshot"
        out["description"] = (f"A {payload} snapshot file (spec/README.md). Generated from core/ir.h by tools/check_spec.py --write-schemas; "
                              "documentation and a cross-check: the normative decoder is core/codec.h. All fields are required (optional values are null), "
                              "exact numbers are strings, JSON floats never appear (JSON-3).")
    out |= {"type": "object", "additionalProperties": False, "required": ["digest", "parents", "payload", "schema", "version"],
            "properties": props, "$defs": dict(sorted(defs.items()))}
    return out


def strip_annotations(s):
    if isinstance(s, dict):
        return {k: strip_annotations(v) for k, v in s.items() if k not in ANNOTATIONS}
    if isinstance(s, list):
        return [strip_annotations(v) for v in s]
    return s


# ---------------------------------------------------------------------------
# a small JSON Schema (2020-12) validator for the subset used in spec/schemas

SUPPORTED_KEYWORDS = {"$schema", "$id", "$defs", "$ref", "$comment", "title", "description", "examples", "type", "properties", "required",
                      "additionalProperties", "items", "enum", "const", "pattern", "minLength", "maxLength", "minItems", "maxItems",
                      "maxProperties", "minimum", "maximum", "anyOf"}
TYPE_NAMES = {"object", "array", "string", "integer", "number", "boolean", "null"}


def schema_subset_problems(schema, where="#") -> list[str]:
    out = []
    if isinstance(schema, bool):
        return out
    if not isinstance(schema, dict):
        return [f"{where}: a schema must be an object or a boolean"]
    for k, v in schema.items():
        if k not in SUPPORTED_KEYWORDS:
            out.append(f"{where}: keyword {k!r} is outside the subset that tools/check_spec.py validates")
        elif k in ("properties", "$defs"):
            if not isinstance(v, dict):
                out.append(f"{where}/{k}: must be an object")
            else:
                for pk, pv in v.items():
                    out += schema_subset_problems(pv, f"{where}/{k}/{pk}")
        elif k in ("items", "additionalProperties"):
            out += schema_subset_problems(v, f"{where}/{k}")
        elif k == "anyOf":
            if not (isinstance(v, list) and v):
                out.append(f"{where}/anyOf: must be a non-empty array")
            else:
                for i, sv in enumerate(v):
                    out += schema_subset_problems(sv, f"{where}/anyOf/{i}")
        elif k == "type":
            names = v if isinstance(v, list) else [v]
            if not all(isinstance(t, str) and t in TYPE_NAMES for t in names):
                out.append(f"{where}/type: unknown type {v!r}")
        elif k == "pattern":
            try:
                re.compile(v)
            except (re.error, TypeError) as e:
                out.append(f"{where}/pattern: {e}")
        elif k == "$ref" and not (isinstance(v, str) and v.startswith("#")):
            out.append(f"{where}/$ref: only local references (#...) are supported")
    return out


def _json_equal(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    return a == b


def _pattern_ok(pattern: str, s: str) -> bool:
    # ECMA-262 '$' does not match before a final newline (Python's does): a
    # pattern anchored at both ends is matched against the whole string.
    if pattern.startswith("^") and pattern.endswith("$") and not pattern.endswith("\\$"):
        return re.fullmatch("(?:" + pattern[1:-1] + ")", s) is not None
    return re.search(pattern, s) is not None


def _resolve(root, ref: str):
    node = root
    for tok in ref[1:].split("/")[1:] if ref != "#" else []:
        tok = tok.replace("~1", "/").replace("~0", "~")
        node = node[tok]
    return node


def _type_ok(t: str, inst) -> bool:
    return {
        "object": lambda x: isinstance(x, dict),
        "array": lambda x: isinstance(x, list),
        "string": lambda x: isinstance(x, str),
        "integer": lambda x: isinstance(x, int) and not isinstance(x, bool),
        "number": lambda x: isinstance(x, (int, float)) and not isinstance(x, bool),
        "boolean": lambda x: isinstance(x, bool),
        "null": lambda x: x is None,
    }[t](inst)


def _ptr(path: str, tok) -> str:
    return f"{path}/{str(tok).replace('~', '~0').replace('/', '~1')}"


def validate(inst, schema, root, path="", limit=20) -> list[str]:
    """Errors of `inst` against `schema` (subset of 2020-12), as 'pointer: message'."""
    errs: list[str] = []

    def go(x, s, p):
        if len(errs) >= limit:
            return
        if s is True:
            return
        if s is False:
            errs.append(f"{p or '/'}: not allowed")
            return
        if "$ref" in s:
            go(x, _resolve(root, s["$ref"]), p)
        if "type" in s:
            types = s["type"] if isinstance(s["type"], list) else [s["type"]]
            if not any(_type_ok(t, x) for t in types):
                errs.append(f"{p or '/'}: expected {' or '.join(types)}, got {type(x).__name__} {json.dumps(x)[:60]}")
                return
        if "const" in s and not _json_equal(x, s["const"]):
            errs.append(f"{p or '/'}: must be {json.dumps(s['const'])}")
        if "enum" in s and not any(_json_equal(x, e) for e in s["enum"]):
            errs.append(f"{p or '/'}: {json.dumps(x)[:60]} is not one of {', '.join(json.dumps(e) for e in s['enum'])}")
        if "anyOf" in s:
            if not any(not validate(x, sub, root, p, 1) for sub in s["anyOf"]):
                sub_errs = [e for sub in s["anyOf"] for e in validate(x, sub, root, p, 3)]
                errs.append(f"{p or '/'}: matches no alternative ({'; '.join(sub_errs[:3])})")
        if isinstance(x, str):
            if "pattern" in s and not _pattern_ok(s["pattern"], x):
                errs.append(f"{p or '/'}: {json.dumps(x)[:60]} does not match {s['pattern']}")
            if "minLength" in s and len(x) < s["minLength"]:
                errs.append(f"{p or '/'}: shorter than {s['minLength']}")
            if "maxLength" in s and len(x) > s["maxLength"]:
                errs.append(f"{p or '/'}: longer than {s['maxLength']}")
        if isinstance(x, int) and not isinstance(x, bool):
            if "minimum" in s and x < s["minimum"]:
                errs.append(f"{p or '/'}: {x} < {s['minimum']}")
            if "maximum" in s and x > s["maximum"]:
                errs.append(f"{p or '/'}: {x} > {s['maximum']}")
        if isinstance(x, list):
            if "minItems" in s and len(x) < s["minItems"]:
                errs.append(f"{p or '/'}: fewer than {s['minItems']} items")
            if "maxItems" in s and len(x) > s["maxItems"]:
                errs.append(f"{p or '/'}: more than {s['maxItems']} items")
            if "items" in s:
                for i, v in enumerate(x):
                    go(v, s["items"], _ptr(p, i))
        if isinstance(x, dict):
            if "maxProperties" in s and len(x) > s["maxProperties"]:
                errs.append(f"{p or '/'}: more than {s['maxProperties']} properties")
            props = s.get("properties", {})
            for r in s.get("required", []):
                if r not in x:
                    errs.append(f"{p or '/'}: missing field {r!r}")
            for k, v in x.items():
                if k in props:
                    go(v, props[k], _ptr(p, k))
                elif "additionalProperties" in s:
                    ap = s["additionalProperties"]
                    if ap is False:
                        errs.append(f"{_ptr(p, k)}: unknown field")
                    else:
                        go(v, ap, _ptr(p, k))

    go(inst, schema, path)
    return errs


def _jsonschema():
    try:
        import jsonschema  # type: ignore
        return jsonschema if hasattr(jsonschema, "Draft202012Validator") else None
    except ImportError:
        return None


# ---------------------------------------------------------------------------
# (d) schemas and snapshot files

def load_schemas(root: Path, problems: Problems):
    part = "(d) schemas"
    ir = None
    try:
        ir = parse_ir(root)
    except (OSError, ValueError) as e:
        problems.add(part, f"cannot read core/ir.h: {e}")
    sdir = root / "spec" / "schemas"
    schemas = {}
    for path in sorted(sdir.glob("*.schema.json")) if sdir.is_dir() else []:
        name = path.name[: -len(".schema.json")]
        try:
            schemas[name] = load_strict(path)
        except (ValueError, UnicodeDecodeError) as e:
            problems.add(part, f"{path.relative_to(root)}: not strict JSON: {e}")
    if ir is None:
        return schemas
    for e, d in ir.enums.items():
        if d["values"] is None:
            problems.add(part, f"core/ir.h: enum {e} has no PLANCERT_ENUM_NAMES")
        elif len(d["values"]) != len(d["enumerators"]):
            problems.add(part, f"core/ir.h: enum {e} has {len(d['enumerators'])} enumerators but {len(d['values'])} spellings")
    js = _jsonschema()
    for payload in ir.payloads:
        rel = f"spec/schemas/{payload}.schema.json"
        if payload not in schemas:
            problems.add(part, f"{rel} is missing (core/ir.h has the schema {payload}); tools/check_spec.py --write-schemas writes it")
            continue
        s = schemas[payload]
        for p in schema_subset_problems(s):
            problems.add(part, f"{rel}: {p}")
        if s.get("$schema") != DRAFT:
            problems.add(part, f"{rel}: $schema must be {DRAFT}")
        if js is not None:
            try:
                js.Draft202012Validator.check_schema(s)
            except js.exceptions.SchemaError as e:
                problems.add(part, f"{rel}: not a valid draft 2020-12 schema: {e.message}")
        try:
            want = strip_annotations(expected_schema(ir, payload, with_docs=False))
        except ValueError as e:
            problems.add(part, str(e))
            continue
        got = strip_annotations(s)
        if not _json_equal(got, want):
            for msg in _diff(got, want, "#")[:10]:
                problems.add(part, f"{rel}: disagrees with core/ir.h at {msg} (tools/check_spec.py --write-schemas regenerates it)")
    for name in sorted(set(schemas) - set(ir.payloads)):
        problems.add(part, f"spec/schemas/{name}.schema.json: {name} is not an IR schema of core/ir.h")
    return schemas


def _diff(got, want, where) -> list[str]:
    if isinstance(got, dict) and isinstance(want, dict):
        out = []
        for k in sorted(set(got) | set(want)):
            if k not in want:
                out.append(f"{where}/{k} (not expected)")
            elif k not in got:
                out.append(f"{where}/{k} (missing; expected {json.dumps(want[k])[:80]})")
            else:
                out += _diff(got[k], want[k], f"{where}/{k}")
        return out
    if not _json_equal(got, want):
        return [f"{where} (found {json.dumps(got)[:80]}, expected {json.dumps(want)[:80]})"]
    return []


def snapshot_digest(schema: str, payload) -> str:
    canon = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return hashlib.blake2b(b"plancert/" + schema.encode("utf-8") + b"\0" + canon, digest_size=32).hexdigest()


def check_snapshot_file(path: Path, label: str, schemas, problems: Problems, part: str) -> None:
    try:
        data = load_strict(path)
    except (ValueError, UnicodeDecodeError) as e:
        problems.add(part, f"{label}: not strict JSON: {e}")
        return
    if not isinstance(data, dict) or not isinstance(data.get("schema"), str):
        problems.add(part, f"{label}: not a snapshot (no string member \"schema\")")
        return
    name = data["schema"]
    if name not in schemas:
        problems.add(part, f"{label}: unknown schema {name!r} (no spec/schemas/{name}.schema.json)")
        return
    s = schemas[name]
    errs = validate(data, s, s)
    for e in errs:
        problems.add(part, f"{label}: {e}")
    js = _jsonschema()
    if js is not None:
        # The built-in validator is the stricter one where they may differ (ECMA-262 '$' does
        # not match before a final newline; Python's re, which jsonschema uses, does), so only
        # a file that the library rejects and the built-in validator accepts is a disagreement.
        lib_errs = list(js.Draft202012Validator(s).iter_errors(data)) if not errs else []
        if lib_errs:
            e = lib_errs[0]
            where = "".join(f"/{t}" for t in e.absolute_path) or "/"
            problems.add(part, f"{label}: {where}: {e.message[:160]} (python3-jsonschema; the built-in validator missed it)")
    if not errs:
        actual = snapshot_digest(name, data["payload"])
        if actual != data["digest"]:
            problems.add(part, f"{label}: stored digest {data['digest']} does not match the payload (recomputed {actual})")


def _lenient_snapshot(path: Path) -> bool | None:
    """True if the file looks like a snapshot, False if not, None if it is not JSON."""
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    return isinstance(data, dict) and ("schema" in data or "payload" in data) and ("digest" in data or "payload" in data)


def check_snapshots(root: Path, schemas, problems: Problems) -> None:
    part = "(d) snapshot files"
    candidates = []
    ex = root / "examples"
    if ex.is_dir():
        for p in sorted(ex.rglob("*.json")):
            if _lenient_snapshot(p):
                candidates.append(p)
    corpus = root / "tests" / "corpus"
    if corpus.is_dir():
        for p in sorted(corpus.rglob("valid-*.json")):
            kind = _lenient_snapshot(p)
            if kind is None:
                problems.add(part, f"{p.relative_to(root)}: not JSON")
            elif kind:
                candidates.append(p)
            else:
                problems.note(part, f"{p.relative_to(root)}: not a snapshot, skipped")
    for p in candidates:
        check_snapshot_file(p, str(p.relative_to(root)), schemas, problems, part)
    problems.note(part, f"{len(candidates)} snapshot file(s) validated" + ("" if _jsonschema() else " (python3-jsonschema not installed: built-in validator only)"))


# ---------------------------------------------------------------------------

def write_schemas(root: Path) -> int:
    ir = parse_ir(root)
    out_dir = root / "spec" / "schemas"
    out_dir.mkdir(parents=True, exist_ok=True)
    for payload in ir.payloads:
        s = expected_schema(ir, payload, with_docs=True)
        path = out_dir / f"{payload}.schema.json"
        path.write_text(json.dumps(s, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {path.relative_to(root)}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent, help="repository root (default: the parent of tools/)")
    ap.add_argument("--require-corpus", action="store_true", help="fail when an obligation has no tests/corpus/<ID>-* file")
    ap.add_argument("--strict-exit-codes", action="store_true", help="fail when an exit-code-2 family is not an exit-code-2 prefix of exit_for_code()")
    ap.add_argument("--snapshot", type=Path, nargs="+", metavar="FILE", help="only validate these snapshot files against spec/schemas")
    ap.add_argument("--write-schemas", action="store_true", help="regenerate spec/schemas/*.schema.json from core/ir.h and exit")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    if not (root / "spec").is_dir():
        print(f"check_spec: {root} has no spec/ directory (use --root)", file=sys.stderr)
        return 2
    if args.write_schemas:
        return write_schemas(root)

    problems = Problems()
    if args.snapshot:
        schemas = load_schemas(root, problems)
        for p in args.snapshot:
            check_snapshot_file(p, str(p), schemas, problems, "(d) snapshot files")
        problems.note("(d) snapshot files", f"{len(args.snapshot)} snapshot file(s) validated" + ("" if _jsonschema() else " (python3-jsonschema not installed: built-in validator only)"))
        soft = set()
    else:
        catalog = load_catalog(root, problems)
        bad_input = check_exit_classes(root, catalog, problems)
        check_code(root, catalog, bad_input, problems)
        check_corpus(root, catalog, problems)
        schemas = load_schemas(root, problems)
        check_snapshots(root, schemas, problems)
        soft = set() if args.require_corpus else {"(c) corpus"}
        if not args.strict_exit_codes:
            soft.add(SOFT_EXIT)
        live, retired, _ = catalog_ids(catalog)
        print(f"check_spec: {len(catalog)} families, {len(live)} live obligations" + (f", {len(retired)} retired" if retired else "")
              + f", {len(schemas)} schemas")

    failed = False
    order = ["(a) catalog format", SOFT_EXIT, "(b) code <-> catalog", "(c) corpus", "(d) schemas", "(d) snapshot files"]
    parts = [p for p in order if not args.snapshot or p in problems.items or p in problems.notes]
    parts += sorted((set(problems.items) | set(problems.notes)) - set(parts))
    for part in parts:
        items = problems.items.get(part, [])
        hard = bool(items) and part not in soft
        failed = failed or hard
        status = "FAIL" if hard else ("report only" if items else "ok")
        print(f"{part}: {status}" + (f", {len(items)} problem(s)" if items else ""))
        for msg in items:
            print(f"  - {msg}")
        for msg in problems.notes.get(part, []):
            print(f"  note: {msg}")
    sys.stdout.flush()
    if failed:
        print("check_spec: FAILED", file=sys.stderr)
        return 1
    print("check_spec: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
