import os
import sys

import pytest
from conftest import running

from helpers import CourseError
from helpers.processes import Group, run_group, run_watched

LOOP = "import sys, time\nfor i in range(1000):\n    print(i, flush=True)\n    time.sleep(0.01)\n"


def counts_then_hangs(last: int) -> list[str]:
    """A process that prints 0..last and then hangs: a kill at `last` leaves exactly those lines, however slow."""
    return [sys.executable, "-c", f"import time\nfor i in range({last + 1}):\n    print(i, flush=True)\ntime.sleep(60)"]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_collects_lines_and_the_return_code():
    finished = run_watched([sys.executable, "-c", "print('a'); import sys; print('b', file=sys.stderr); sys.exit(3)"])
    assert sorted(finished.lines) == ["a", "b"] and finished.returncode == 3 and finished.killed is None


def test_kill_when_stops_it_at_that_line():
    seen = []
    finished = run_watched(counts_then_hangs(5), kill_when=lambda line: line == "5", echo=seen.append)
    assert finished.lines == [str(i) for i in range(6)] == seen
    assert finished.killed == "on purpose" and finished.returncode == -9


def test_the_output_of_a_process_killed_on_purpose_ends_at_the_kill_line():
    finished = run_watched([sys.executable, "-c", LOOP], kill_when=lambda line: line == "5")
    assert finished.lines == [str(i) for i in range(6)] and finished.killed == "on purpose"


def test_timeout_kills_a_hung_process_and_its_children(tmp_path):
    child_pid = tmp_path / "child.pid"
    code = ("import subprocess, sys, time\n"
            f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            f"open({str(child_pid)!r}, 'w').write(str(p.pid))\nprint('started', flush=True)\ntime.sleep(60)\n")
    finished = run_watched([sys.executable, "-c", code], timeout_s=3)
    assert finished.killed == "timeout" and finished.lines == ["started"]
    pid = int(child_pid.read_text())
    for _ in range(50):  # the orphaned grandchild is reaped by init shortly after the kill
        if not alive(pid):
            break
        import time

        time.sleep(0.1)
    assert not alive(pid)


def test_an_exception_in_the_callback_still_kills_the_process():
    def boom(line):
        raise RuntimeError("cell interrupted")

    marker = "# callback-raises-marker"
    with pytest.raises(RuntimeError, match="cell interrupted"):
        run_watched([sys.executable, "-c", LOOP + marker], echo=boom)
    assert running(marker) == []


def test_a_group_left_by_an_exception_kills_what_it_started():
    marker = "# group-left-early-marker"
    with pytest.raises(RuntimeError, match="cell interrupted"), Group() as group:
        proc = group.start([sys.executable, "-c", LOOP + marker])
        raise RuntimeError("cell interrupted")  # before anyone watched it
    assert proc.returncode == -9 and group.results[0].killed == "cleanup"
    assert running(marker) == []


def test_rejects_a_non_positive_timeout():
    with pytest.raises(CourseError, match=r"watch\(timeout_s=0\)"):
        run_watched(["true"], timeout_s=0)


def test_when_one_process_of_a_group_fails_the_others_are_stopped():
    import time

    start = time.monotonic()
    crash = "import sys, time\nprint('up', flush=True)\ntime.sleep(0.5)\nsys.exit('worker lost')"
    results = run_group([[sys.executable, "-c", LOOP], [sys.executable, "-c", crash]], timeout_s=60)
    assert time.monotonic() - start < 10
    assert results[1].returncode == 1 and results[1].lines == ["up", "worker lost"] and results[1].killed is None
    assert results[0].killed == "a peer failed" and results[0].returncode == -9


def test_a_named_group_says_which_process_failed_and_how():
    crash = "print('loading', flush=True); raise SystemExit(3)"
    with pytest.raises(CourseError, match=r"^worker 1 exited with code 3 \(last line: 'loading'\); the others were "
                                          r"stopped\.$"):
        run_group([[sys.executable, "-c", LOOP], [sys.executable, "-c", crash]], timeout_s=60, name="worker")
    with pytest.raises(CourseError, match=r"^job 0 did not finish within 1 s \(last line: '0'\)"):
        run_group([counts_then_hangs(0)], timeout_s=1, name="job")


def test_notify_when_sends_sigterm_once_and_keeps_watching():
    code = ("import signal, sys, time\n"
            "signal.signal(signal.SIGTERM, lambda *_: (print('got SIGTERM', flush=True), sys.exit(42)))\n"
            "for i in range(1000):\n    print(i, flush=True)\n    time.sleep(0.01)\n")
    peer = LOOP.replace("range(1000)", "range(200)")  # about 2 s, to its end
    results = run_group([[sys.executable, "-c", code], [sys.executable, "-c", peer]],
                        notify_when=lambda i, line: i == 0 and line in ("3", "4"), ok_returncodes=(0, 42),
                        timeout_s=60)
    assert results[0].notified and results[0].returncode == 42 and results[0].killed is None
    assert results[0].lines[-1] == "got SIGTERM" and results[0].lines.count("got SIGTERM") == 1
    assert results[1].returncode == 0 and results[1].killed is None  # 42 is no failure: its peer ran to its end


def test_group_kill_when_gets_the_index():
    results = run_group([counts_then_hangs(3)] * 2, kill_when=lambda i, line: i == 1 and line == "3",
                        stop_all_on_failure=False, timeout_s=2)
    assert results[1].killed == "on purpose" and results[1].lines[-1] == "3"
    assert results[0].killed == "timeout"


def test_running_finds_a_process_by_its_command_line_and_not_after_it_ended():
    import subprocess
    import time

    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "marker-4711"])
    try:
        # Some kernels (seen on CI) show the new command line in /proc a moment after exec: poll briefly.
        deadline = time.monotonic() + 5
        while not running(r"marker-4711") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert running(r"marker-4711") == [proc.pid]
    finally:
        proc.kill()
        proc.wait()
    assert running(r"marker-4711") == []


def test_children_die_with_their_parent_even_when_it_is_sigkilled(tmp_path):
    import signal
    import subprocess
    import time

    root = str(__import__("pathlib").Path(__file__).resolve().parents[2])
    code = (f"import sys; sys.path.insert(0, {root!r})\n"
            "from helpers.processes import run_watched\n"
            f"run_watched([sys.executable, '-c', 'import time; time.sleep(60)', 'orphan-check-{tmp_path.name}'], "
            "timeout_s=60)\n")
    parent = subprocess.Popen([sys.executable, "-c", code])
    for _ in range(100):
        if running(f"orphan-check-{tmp_path.name}"):
            break
        time.sleep(0.1)
    assert running(f"orphan-check-{tmp_path.name}")
    parent.send_signal(signal.SIGKILL)  # no finally runs in the parent
    parent.wait()
    for _ in range(50):
        if not running(f"orphan-check-{tmp_path.name}"):
            break
        time.sleep(0.1)
    assert running(f"orphan-check-{tmp_path.name}") == []


def test_check_passes_the_expected_ending_and_explains_any_other():
    ok = run_watched([sys.executable, "-c", "print('done')"])
    assert ok.check("the job") is ok
    failed = run_watched([sys.executable, "-c", "print('loading'); raise SystemExit('no data')"])
    with pytest.raises(CourseError, match=r"(?s)the job exited with code 1, expected exit code 0\..*no data"):
        failed.check("the job")
    hung = run_watched(counts_then_hangs(0), timeout_s=1)
    with pytest.raises(CourseError, match=r"killed \(timeout\).*timeout_s"):
        hung.check("the job")
    with pytest.raises(CourseError, match="expected exit code -9"):
        ok.check("the job", returncode=-9)
