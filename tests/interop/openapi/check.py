"""Checks an agent's OpenAPI document and fuzzes its HTTP+JSON binding from it.

    python check.py BASE_URL REPORT_DIR MAX_EXAMPLES SEED

1. Fetches BASE_URL/openapi.json and validates it with openapi-spec-validator (OpenAPI 3.1).
2. Runs schemathesis against BASE_URL from that document: generated and boundary requests
   (positive and negative) for every operation, checking that no response is a server error
   and that status codes, content types, headers and bodies conform to the document.

Prints one line per fact for the Rust test (examples/tests/openapi.rs): `PASS validate`,
`OPERATIONS <tested> <total>`, `CASES <n>`, `ACCEPTED <operation> <n>` (positive cases answered
2xx), `MODES <operation> <positive> <negative>` (cases per documented operation),
`UNDOCUMENTED <n>` (cases of methods a path does not document), `FAILURE <text>` per failure,
and `FAILURES <n>`. Exits non-zero when anything failed.
"""

import json
import pathlib
import subprocess
import sys
import urllib.request

from openapi_spec_validator import OpenAPIV31SpecValidator, validate


def main() -> int:
    base, report_dir, max_examples, seed = sys.argv[1:5]
    with urllib.request.urlopen(f"{base}/openapi.json", timeout=30) as response:
        doc = json.load(response)
    if doc.get("openapi") != "3.1.0":
        print(f"FAILURE the document is not OpenAPI 3.1.0: {doc.get('openapi')!r}")
        return 1
    validate(doc, cls=OpenAPIV31SpecValidator)  # raises on an invalid document
    print("PASS validate", flush=True)

    report = pathlib.Path(report_dir) / "schemathesis.json"
    events = pathlib.Path(report_dir) / "schemathesis.ndjson"
    st = pathlib.Path(sys.executable).parent / "schemathesis"
    command = [
        str(st), "run", f"{base}/openapi.json",
        "--url", base,
        # The document describes v1.0; a request without the header is v0.3 (spec §3.6).
        "--header", "A2A-Version: 1.0",
        "--checks", ",".join([
            "not_a_server_error",
            "status_code_conformance",
            "content_type_conformance",
            "response_headers_conformance",
            "response_schema_conformance",
            # The coverage phase also sends the methods a path does not document: 405 with
            # an `Allow` header naming the documented ones.
            "unsupported_method",
            "allow_header_conformance",
        ]),
        # No examples phase: the document has no examples. No stateful phase: it has no links,
        # and a subscription to a live task would stay open.
        "--phases", "coverage,fuzzing",
        "--max-examples", max_examples,
        "--seed", seed,
        # One worker: CPython 3.11.7 (this machine's python3) keeps the AST constructor's
        # recursion depth per interpreter, not per call (gh-106905, fixed in later releases), so
        # two threads in `ast.parse` at once (hypothesis parses lambdas to describe strategies)
        # can fail with "AST constructor recursion depth mismatch": seen here with 2 workers.
        "--workers", "1",
        "--request-timeout", "30",
        "--no-color",
        "--report", "json,ndjson",
        "--report-json-path", str(report),
        "--report-ndjson-path", str(events),
    ]
    run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sys.stderr.write(run.stdout)
    if not report.exists():
        print(f"FAILURE schemathesis wrote no report (exit {run.returncode})")
        return 1
    result = json.loads(report.read_text())
    ops = result["operations"]
    print(f"OPERATIONS {ops['tested']} {ops['total']}")
    print(f"CASES {result['test_cases']['generated']}")
    for op, phases in sorted(result.get("valid_rates", {}).items()):
        accepted = sum(p.get("accepted", 0) for p in phases.values())
        print(f"ACCEPTED {op} {accepted}")
    documented = {
        f"{method.upper()} {path}" for path, item in doc["paths"].items() for method in item
    }
    undocumented = 0
    for op, (positive, negative) in sorted(modes(events).items()):
        if op in documented:
            print(f"MODES {op} {positive} {negative}")
        else:
            undocumented += positive + negative
    print(f"UNDOCUMENTED {undocumented}")
    failures = list(result.get("failures", [])) + list(result.get("errors", []))
    for f in failures:
        print("FAILURE " + json.dumps(f)[:2000])
    print(f"FAILURES {len(failures)}")
    ok = run.returncode == 0 and result["exit_code"] == 0 and not failures
    return 0 if ok else 1


def modes(events: pathlib.Path) -> dict[str, tuple[int, int]]:
    """Positive and negative cases per operation, from the recorded scenarios."""
    counts: dict[str, list[int]] = {}
    if not events.exists():
        return {}
    with events.open(encoding="utf-8") as lines:
        for line in lines:
            finished = json.loads(line).get("ScenarioFinished")
            if not finished:
                continue
            # A skipped scenario records no case.
            for case in finished.get("recorder", {}).get("cases", {}).values():
                value = case["value"]
                op = f"{value['method']} {value['path']}"
                mode = value["meta"]["generation"]["mode"]
                count = counts.setdefault(op, [0, 0])
                count[0 if mode == "positive" else 1] += 1
    return {op: (c[0], c[1]) for op, c in counts.items()}


if __name__ == "__main__":
    sys.exit(main())
