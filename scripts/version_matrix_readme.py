"""Write scripts/version_matrix.sh's results into README.md, between the version-matrix markers.

    python scripts/version_matrix_readme.py README.md RESULTS_DIR VERSION...

RESULTS_DIR holds one pytest ``<version>.xml`` (JUnit) per version run. Rows of versions not
run this time are kept as they were; the section is rewritten whole.
"""

from __future__ import annotations

import datetime
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

START, END = "<!-- version-matrix:start -->", "<!-- version-matrix:end -->"
HEADER = "| paddlepaddle | passed | failed | errors | skipped | run on |"
ROW = re.compile(r"^\| (\d+\.\d+\.\d+) \|")
REASON = re.compile(r"^- (\d+\.\d+\.\d+) skips: ")


def counts(xml: Path) -> tuple[dict[str, int], Counter[str]]:
    root = ET.parse(xml).getroot()
    suites = [root] if root.tag == "testsuite" else list(root)
    total = {k: sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors")}
    total["skipped"] = sum(int(s.get("skipped", 0)) for s in suites)
    reasons: Counter[str] = Counter()
    for skipped in root.iter("skipped"):
        message = skipped.get("message", "")
        reasons[re.sub(r"^.*?: ", "", message, count=1) if ".py:" in message else message] += 1
    return total, reasons


def row(version: str, total: dict[str, int], day: str) -> str:
    passed = total["tests"] - total["failures"] - total["errors"] - total["skipped"]
    cells = [version, passed, total["failures"], total["errors"], total["skipped"], day]
    return "| " + " | ".join(str(c) for c in cells) + " |"


def main(readme: Path, results: Path, versions: list[str]) -> None:
    text = readme.read_text()
    if START not in text or END not in text:
        sys.exit(f"{readme} has no {START} ... {END} section to rewrite")
    head, rest = text.split(START, 1)
    old, tail = rest.split(END, 1)
    rows = {m[1]: line for line in old.splitlines() if (m := ROW.match(line))}
    notes = {m[1]: line for line in old.splitlines() if (m := REASON.match(line))}
    day = datetime.date.today().isoformat()
    for version in versions:
        xml = results / f"{version}.xml"
        if not xml.exists():
            sys.exit(f"no results for {version} in {results}")
        total, reasons = counts(xml)
        rows[version] = row(version, total, day)
        listed = "; ".join(f"{n} × {why}" for why, n in reasons.most_common())
        notes[version] = f"- {version} skips: {listed}" if listed else f"- {version} skips: none"
    order = sorted(rows, key=lambda v: tuple(int(p) for p in v.split(".")))
    body = [HEADER, "| --- | ---: | ---: | ---: | ---: | --- |", *(rows[v] for v in order), ""]
    body += [notes[v] for v in order if v in notes]
    readme.write_text(head + START + "\n" + "\n".join(body) + "\n" + END + tail)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:])
