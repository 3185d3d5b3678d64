"""scripts/audit_deps.py: a real finding fails, an unreachable vulnerability service skips.

The pip-audit outputs below are what pip-audit 2.10 prints with `--format json` (recorded on
this machine for the offline cases; the finding follows its documented report format).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import audit_deps  # noqa: E402

CLEAN = {"name": "django", "version": "5.2.19", "vulns": []}
VULNERABLE = {
    "name": "requests",
    "version": "2.0.0",
    "vulns": [
        {
            "id": "PYSEC-2014-13",
            "fix_versions": ["2.3.0"],
            "aliases": ["CVE-2014-1829"],
            "description": "Requests before 2.3.0 exposes Authorization headers on redirects.",
        }
    ],
}
NOT_FOUND = {
    "name": "django",
    "skip_reason": "Dependency not found on PyPI and could not be audited: django (5.2.19)",
}
OSV_OFFLINE_STDERR = """Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/requests/adapters.py", line 729, in send
    raise ConnectionError(e, request=request)
requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.osv.dev', port=443): \
Max retries exceeded with url: /v1/query (Caused by NameResolutionError("Failed to resolve \
'api.osv.dev' ([Errno -2] Name or service not known)"))
"""


def report(*deps: dict[str, object]) -> str:
    return json.dumps({"dependencies": list(deps), "fixes": []})


def test_a_known_vulnerability_fails_and_names_the_package_the_ids_and_the_fix() -> None:
    decision = audit_deps.decide(1, report(CLEAN, VULNERABLE), "")
    assert (decision.status, decision.exit_code) == ("FAIL", 1)
    assert decision.findings == ["requests==2.0.0: PYSEC-2014-13 / CVE-2014-1829 (fixed in: 2.3.0)"]


def test_a_finding_still_fails_when_other_packages_could_not_be_audited() -> None:
    decision = audit_deps.decide(1, report(NOT_FOUND, VULNERABLE), "")
    assert decision.exit_code == 1


def test_an_ignored_vulnerability_id_or_alias_does_not_fail(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(audit_deps, "IGNORED", {"CVE-2014-1829": "we never follow redirects"})
    decision = audit_deps.decide(1, report(CLEAN, VULNERABLE), "")
    assert (decision.status, decision.exit_code) == ("OK", 0)


def test_pypi_answering_not_found_for_every_package_is_offline_and_skips() -> None:
    other = {**NOT_FOUND, "name": "celery", "skip_reason": NOT_FOUND["skip_reason"]}
    decision = audit_deps.decide(0, report(NOT_FOUND, other), "No known vulnerabilities found")
    assert (decision.status, decision.exit_code) == ("SKIPPED", 0)
    assert decision.report().startswith("SKIPPED: offline (")
    assert "all 2 pinned packages" in decision.message


def test_a_connection_error_without_a_report_is_offline_and_skips() -> None:
    decision = audit_deps.decide(1, "", OSV_OFFLINE_STDERR)
    assert (decision.status, decision.exit_code) == ("SKIPPED", 0)
    assert "NameResolutionError" in decision.message


def test_any_other_pip_audit_failure_is_an_error_not_a_skip() -> None:
    stderr = "ERROR:pip_audit._cli:requirement file nope.txt does not exist\n"
    decision = audit_deps.decide(1, "", stderr)
    assert (decision.status, decision.exit_code) == ("ERROR", 2)
    assert "nope.txt" in decision.message


def test_all_audited_and_clean_is_ok_and_lists_what_was_not_audited() -> None:
    decision = audit_deps.decide(0, report(CLEAN, NOT_FOUND), "")
    assert (decision.status, decision.exit_code) == ("OK", 0)
    assert decision.message == "no known vulnerabilities in 1 audited packages"
    assert "not audited: django" in decision.report()


def fake_pip_audit(tmp_path: Path, stdout: str, stderr: str, code: int) -> Path:
    script = tmp_path / "pip-audit"
    script.write_text(
        f"#!{sys.executable}\nimport sys\n"
        f"sys.stdout.write({stdout!r})\nsys.stderr.write({stderr!r})\nsys.exit({code})\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


@pytest.mark.parametrize(
    ("stdout", "stderr", "code", "exit_code", "first_line"),
    [
        (report(CLEAN, VULNERABLE), "", 1, 1, "[requirements.txt] FAIL: 1 known vulnerabilit"),
        (report(NOT_FOUND), "", 0, 0, "[requirements.txt] SKIPPED: offline ("),
        ("", OSV_OFFLINE_STDERR, 1, 0, "[requirements.txt] SKIPPED: offline ("),
        (report(CLEAN), "", 0, 0, "[requirements.txt] OK: no known vulnerabilities"),
    ],
    ids=["finding", "pypi-not-found", "connection-error", "clean"],
)
def test_the_script_exits_as_decided(
    tmp_path: Path, stdout: str, stderr: str, code: int, exit_code: int, first_line: str
) -> None:
    fake = fake_pip_audit(tmp_path, stdout, stderr, code)
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "audit_deps.py"), "requirements.txt"],
        env={**os.environ, "PIP_AUDIT": str(fake)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == exit_code, result.stdout + result.stderr
    assert result.stdout.startswith(first_line), result.stdout
