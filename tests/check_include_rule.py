#!/usr/bin/env python3
"""Checks that the headers under include/tpudsl/ include only what docs/design.md's table
("Which directory includes which") allows: each directory its own headers, the base (core/, detail/,
config.hpp) and the directories its line names; a directory named with header files in parentheses,
`kernels/ (scratch.hpp: ...)`, allows those headers only. Usage: check_include_rule.py <repo root>."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
design = (root / "docs" / "design.md").read_text()
section = design.split("## Which directory includes which", 1)[1]
table = section.split("```text", 1)[1].split("```", 1)[0]

base = {"core", "detail"}
allowed = {}   # directory -> {directory: None (any header) or a set of headers}
for line in table.strip().splitlines():
    head, _, rest = line.partition(" ")
    if not head.endswith("/") or "," in head:
        continue   # the base's line
    d = head.rstrip("/")
    entries = {}
    for m in re.finditer(r"([a-z_]+)/(?:\s*\(([^)]*)\))?", rest):
        names = re.findall(r"([a-z_]+\.hpp)", (m.group(2) or "").split(":")[0])
        entries[m.group(1)] = set(names) if names else None
    if rest.strip().startswith("nothing"):
        entries = {}
    allowed[d] = entries

errors = []
include = root / "include" / "tpudsl"
for header in sorted(include.rglob("*.hpp")):
    rel = header.relative_to(include)
    if len(rel.parts) == 1:
        continue   # an umbrella: includes what it gathers
    d = rel.parts[0]
    if d in base:
        continue
    if d not in allowed:
        errors.append(f"{rel}: directory {d}/ has no line in docs/design.md's table")
        continue
    for n, text in enumerate(header.read_text().splitlines(), 1):
        m = re.match(r"#include <tpudsl/([a-z_]+)/([^>]+)>", text)
        if not m:
            continue
        to, name = m.group(1), m.group(2)
        if to == d or to in base:
            continue
        if to not in allowed[d]:
            errors.append(f"{rel}:{n}: includes {to}/{name}, but the table lets {d}/ include only "
                          f"{', '.join(sorted(allowed[d])) or 'the base'}")
        elif allowed[d][to] is not None and pathlib.PurePath(name).name not in allowed[d][to]:
            errors.append(f"{rel}:{n}: includes {to}/{name}, but the table lets {d}/ include of {to}/ only "
                          f"{', '.join(sorted(allowed[d][to]))}")

for e in errors:
    print(e)
print(f"{len(errors)} include(s) outside docs/design.md's table" if errors else "every include follows the table")
sys.exit(1 if errors else 0)
