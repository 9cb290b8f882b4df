"""The check lines of the bench's self-tests (verdicts.py, report_check.py,
netty_check.py) and their tally, which tests/bench/run.sh reads from the
last line: "<TAG> <passed> <failed>"."""
import sys

passed = failed = 0


def check(name, ok, detail=""):
    """One line per check; a failure shows its detail (cut at 600 characters:
    some are whole reports)."""
    global passed, failed
    print(f"{'ok  ' if ok else 'FAIL'} {name}{(': ' + str(detail)[:600]) if detail and not ok else ''}")
    if ok:
        passed += 1
    else:
        failed += 1
    return bool(ok)


def finish(tag):
    print(f"{tag} {passed} {failed}")
    sys.exit(1 if failed else 0)
