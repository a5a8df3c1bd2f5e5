"""JUnit XML for CI test-result views: one test case per family × component × property.

A test case fails when its property has divergences the baseline does not know; baselined ones
pass and are listed in its output. A component not checked on a family (its names missing from
the --impl) is a skipped test case, a harness error an errored one. One test suite per family:

    <testcase classname="textbound.gpt2.tokenizer" name="encode">
      <failure type="divergence" message="1 new divergence(s): tokenizer/encode/ids: drops tokens at the end">...
"""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import defaultdict

from ..naming.signatures import signature_groups, split_records

# Characters XML 1.0 cannot carry even escaped; case inputs may hold any of them.
NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: str) -> str:
    return NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", value)


def _case(suite: ET.Element, family: str, component: str, name: str, out: str) -> ET.Element:
    testcase = ET.SubElement(suite, "testcase", classname=f"textbound.{family}.{component}", name=name, time="0")
    ET.SubElement(testcase, "system-out").text = _text(out)
    return testcase


def render(summary: dict, records: list[dict]) -> str:
    new_in = {tuple(pair) for pair in summary.get("new_in", [])}
    by_property: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    divergences, disagreements = split_records(records)
    for record in divergences:
        by_property[(record["family"], record["component"], record["property"])].append(record)
    root = ET.Element("testsuites", name="textbound")
    suites: dict[str, ET.Element] = {}

    def suite(family: str) -> ET.Element:
        if family not in suites:
            suites[family] = ET.SubElement(root, "testsuite", name=f"textbound.{family}")
        return suites[family]

    for entry in summary.get("properties", []):
        key = (entry["family"], entry["component"], entry["property"])
        found = by_property[key]
        new = [r for r in found if (r["family"], r["signature"]) in new_in]
        testcase = _case(suite(key[0]), *key, f"{entry['cases']} cases, {len(found)} divergences "
                                              f"({len(found) - len(new)} baselined), "
                                              f"{entry.get('oracle_disagreements', 0)} oracle disagreements")
        if new:
            groups = signature_groups(new)
            failure = ET.SubElement(testcase, "failure", type="divergence",
                                    message=_text(f"{len(new)} new divergence(s): "
                                                  + "; ".join(g.signature for g in groups)))
            failure.text = _text("\n\n".join(
                f"{g.signature} ({len(g.records)})\nsmallest input: "
                f"{json.dumps(g.smallest['minimized_input'])}\nreplay: {g.smallest['reproduce']}" for g in groups))
    for skipped in summary.get("skipped", []):
        testcase = _case(suite(skipped["family"]), skipped["family"], skipped["component"],
                         skipped.get("property", "(not checked)"), "")
        ET.SubElement(testcase, "skipped", message=_text(skipped["reason"]))
    for error in summary.get("harness_errors", []):
        testcase = _case(suite(error["family"]), error["family"], error["component"], "(harness)", "")
        ET.SubElement(testcase, "error", type="harness", message=_text(error["message"]))
    if not summary.get("completed", True):
        testcase = _case(suite("run"), "run", "run", "(completed)", "")
        ET.SubElement(testcase, "error", type="interrupted", message=_text(f"interrupted: {summary.get('interrupted')}"))
    for element in (root, *suites.values()):
        cases = element.iter("testcase")
        totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for testcase in cases:
            totals["tests"] += 1
            for kind, name in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
                totals[name] += testcase.find(kind) is not None
        element.attrib.update({k: str(v) for k, v in totals.items()})
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
