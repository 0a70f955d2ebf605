"""tools.servers.git_repository: this repository served by git daemon on 127.0.0.1, as pip reads it."""

import subprocess

from conftest import ROOT

from tools import servers


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], capture_output=True, text=True, timeout=60,
                          env={"GIT_TERMINAL_PROMPT": "0", "PATH": "/usr/bin:/bin"})


def test_serves_every_commit_and_stops_with_the_block(tmp_path):
    head = git("-C", str(ROOT), "rev-parse", "HEAD").stdout.strip()
    with servers.git_repository(ROOT) as address:
        assert address.startswith("git://127.0.0.1:") and address.endswith("/course.git")
        assert git("ls-remote", address, "HEAD").stdout.split()[0] == head
        git("init", "-q", str(tmp_path))
        fetched = git("-C", str(tmp_path), "fetch", "-q", address, head)
        assert fetched.returncode == 0, fetched.stderr  # a commit by its sha, as pip asks for REVISION
        unknown = git("-C", str(tmp_path), "fetch", "-q", address, "0" * 39 + "1")
        assert unknown.returncode and "not our ref" in unknown.stderr
        wrong_path = git("ls-remote", address.replace("course.git", "nope.git"))
        assert wrong_path.returncode and "not exported" in wrong_path.stderr
    stopped = git("ls-remote", address)
    assert stopped.returncode and "Connection refused" in stopped.stderr
