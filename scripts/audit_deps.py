"""Check the pinned requirements for known vulnerabilities with pip-audit.

    python scripts/audit_deps.py [REQUIREMENTS ...]    (default: requirements.txt and
                                                        requirements-dev.txt, each on its own)

pip-audit asks a vulnerability service (PyPI's JSON API by default) about every pinned
package. This wrapper reads its JSON report and decides:

- a known vulnerability in any pinned package (not listed in IGNORED): FAIL, exit 1;
- the service could not be reached (a connection error, or PyPI answering "not found" for
  every single package, as an offline mirror does): print `SKIPPED: offline (<reason>)` and
  exit 0: no network is not a finding;
- pip-audit could not run for another reason (a bad requirements file, a crash): exit 2;
- otherwise `OK`, exit 0 (packages that could not be audited are listed).

The decision is `decide()`, unit tested in tests/security/test_dependency_audit.py against
recorded pip-audit output. `make audit-deps` and `.ci/run` call this script.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_REQUIREMENTS = ["requirements.txt", "requirements-dev.txt"]

# Vulnerability ids judged not to apply, each with the reason. Empty today.
IGNORED: dict[str, str] = {}

# Signs in pip-audit's stderr that the vulnerability service was not reachable.
OFFLINE_SIGNS = (
    "ConnectionError",
    "Max retries exceeded",
    "NameResolutionError",
    "Name or service not known",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "Connection refused",
    "timed out",
    "ReadTimeout",
    "ConnectTimeout",
    "ProxyError",
    "SSLError",
)
NOT_FOUND = "not found on PyPI"

OK, FAIL, SKIPPED, ERROR = "OK", "FAIL", "SKIPPED", "ERROR"
EXIT = {OK: 0, SKIPPED: 0, FAIL: 1, ERROR: 2}


@dataclass
class Decision:
    status: str
    message: str
    findings: list[str] = field(default_factory=list)
    unaudited: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return EXIT[self.status]

    def report(self) -> str:
        lines = [f"{self.status}: {self.message}"]
        lines += [f"  {line}" for line in self.findings]
        if self.unaudited and self.status == OK:
            lines.append("  not audited: " + ", ".join(self.unaudited))
        return "\n".join(lines)


def _offline_reason(stderr: str) -> str | None:
    for line in reversed(stderr.strip().splitlines()):
        if any(sign in line for sign in OFFLINE_SIGNS):
            return line.strip()[:300]
    return None


def decide(returncode: int, stdout: str, stderr: str) -> Decision:
    """What one pip-audit run (`--format json`) means for the build."""
    try:
        report = json.loads(stdout) if stdout.strip() else None
    except json.JSONDecodeError:
        report = None
    if not isinstance(report, dict) or not isinstance(report.get("dependencies"), list):
        reason = _offline_reason(stderr)
        if reason is not None:
            return Decision(SKIPPED, f"offline ({reason})")
        tail = stderr.strip().splitlines()[-1:] or [f"exit code {returncode}, no report"]
        return Decision(ERROR, f"pip-audit did not produce a report: {tail[0][:300]}")

    findings: list[str] = []
    unaudited: list[str] = []
    not_found = 0
    dependencies = report["dependencies"]
    for dep in dependencies:
        name = f"{dep.get('name')}=={dep.get('version', '?')}"
        skip = dep.get("skip_reason")
        if skip:
            unaudited.append(f"{dep.get('name')} ({skip})")
            not_found += NOT_FOUND in skip
            continue
        for vuln in dep.get("vulns", []):
            ids = [vuln.get("id", "?"), *vuln.get("aliases", [])]
            if any(i in IGNORED for i in ids):
                continue
            fixes = ", ".join(vuln.get("fix_versions", [])) or "no fix yet"
            findings.append(f"{name}: {' / '.join(ids)} (fixed in: {fixes})")

    if findings:
        return Decision(FAIL, f"{len(findings)} known vulnerabilit(ies)", findings, unaudited)
    if dependencies and not_found == len(dependencies):
        return Decision(
            SKIPPED,
            f"offline (the vulnerability service answered '{NOT_FOUND}' for all "
            f"{len(dependencies)} pinned packages: it is not reachable from here)",
        )
    if not dependencies:
        return Decision(ERROR, "pip-audit found no pinned packages to audit")
    audited = len(dependencies) - len(unaudited)
    return Decision(OK, f"no known vulnerabilities in {audited} audited packages", [], unaudited)


def run_pip_audit(requirements: str, pip_audit: str) -> tuple[int, str, str]:
    command = [
        pip_audit,
        "--requirement",
        requirements,
        "--no-deps",  # every package is pinned in the files; no resolver, no network install
        "--disable-pip",
        "--format",
        "json",
        "--progress-spinner",
        "off",
        "--timeout",
        "15",
    ]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    return result.returncode, result.stdout, result.stderr


def _find_pip_audit() -> str:
    beside = Path(sys.executable).with_name("pip-audit")
    return os.environ.get("PIP_AUDIT") or (
        str(beside) if beside.exists() else shutil.which("pip-audit") or "pip-audit"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("requirements", nargs="*", default=DEFAULT_REQUIREMENTS)
    args = parser.parse_args(argv)
    pip_audit = _find_pip_audit()
    worst = OK
    for requirements in args.requirements:
        try:
            decision = decide(*run_pip_audit(requirements, pip_audit))
        except FileNotFoundError:
            decision = Decision(
                ERROR, f"{pip_audit} is not installed (pip install -r requirements-dev.txt)"
            )
        print(f"[{requirements}] {decision.report()}")
        if EXIT[decision.status] > EXIT[worst] or (worst == OK and decision.status == SKIPPED):
            worst = decision.status
    return EXIT[worst]


if __name__ == "__main__":
    sys.exit(main())
