"""Print what the privacy check verifies, locally and under moto (agentmem.eval.privacy has the scenario).

    .venv/bin/python scripts/privacy_check.py            # both backends
    .venv/bin/python scripts/privacy_check.py --local    # only the embedded one

Exit status 1 when a check fails. Checks marked [needs a name detector] fail while the wired detector
finds no person's name; the report's header line says which detector ran and whether it finds one.
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")  # the handlers' INFO lines would drown the report

from agentmem.eval.privacy import format_report, run_local, run_moto, scratch_folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--local", action="store_true", help="only the embedded backends")
    parser.add_argument("--moto", action="store_true", help="only the AWS adapters under moto")
    args = parser.parse_args()
    runs = [run_local, run_moto]
    if args.local != args.moto:
        runs = [run_local] if args.local else [run_moto]
    failed = 0
    for run in runs:
        with scratch_folder() as folder:
            report = run(folder)
        print(format_report(report))
        failed += len(report.failed)
    total = "every check held" if not failed else f"{failed} check(s) failed"
    print(f"\n{total}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
