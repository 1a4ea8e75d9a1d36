"""`ckdn` end to end: real processes, real files, the contract's documents and exit codes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.project import PY, UNUSED_PLUGINS, Project, clean_env, py


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("ckdn: ")
    assert "Traceback" not in proc.stderr
    return lines[0]


def test_a_passing_check_prints_the_tiny_pass_digest_and_exits_0(project: Project) -> None:
    project.config('[check.ok]\ncommand = "true"\nparser = "generic"\n')
    proc = project.ckdn("run", "ok")
    assert proc.returncode == 0, proc.stderr
    doc = project.digest(proc)
    (run_dir,) = project.run_dirs()
    assert doc == {"schema": "ckdn.digest/2", "check": "ok", "status": "pass", "rc": 0,
                   "run_dir": f".agent-runs/{run_dir.name}"}
    assert proc.stderr == ""
    assert {p.name for p in run_dir.iterdir()} >= {"full.log", "meta.json", "digest.json"}
    assert json.loads((run_dir / "digest.json").read_text()) == doc
    assert (project.runs / "latest").resolve() == run_dir.resolve()


def test_stdout_is_compact_json_with_sorted_keys(project: Project) -> None:
    project.config('[check.ok]\ncommand = "true"\nparser = "generic"\n')
    line = project.ckdn("run", "ok").stdout.strip()
    doc = json.loads(line)
    assert line == json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def test_the_tools_exit_code_passes_through(project: Project) -> None:
    project.config(f'[check.three]\ncommand = """{py("import sys; sys.exit(3)")}"""\n'
                   'parser = "generic"\n')
    proc = project.ckdn("run", "three")
    assert proc.returncode == 3
    doc = project.digest(proc)
    assert doc["status"] == "fail"
    assert doc["rc"] == 3
    assert "status_reason" in doc


def test_a_generic_failure_carries_the_log_tail(project: Project) -> None:
    code = "print('first'); print('the real reason'); raise SystemExit(1)"
    project.config(f'[check.bad]\ncommand = """{py(code)}"""\nparser = "generic"\n')
    doc = project.digest(project.ckdn("run", "bad"))
    assert doc["log_tail"][-1] == "the real reason"
    assert "full.log" in doc["artifacts"]


def test_a_signal_death_exits_1_and_records_the_negative_code(project: Project) -> None:
    code = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    project.config(f'[check.killed]\ncommand = """{py(code)}"""\nparser = "generic"\n')
    proc = project.ckdn("run", "killed")
    assert proc.returncode == 1
    assert project.digest(proc)["rc"] == -9


def test_a_missing_executable_is_an_error_with_rc_127(project: Project) -> None:
    project.config('[check.ghost]\ncommand = "no-such-tool-ckdn --x"\nparser = "generic"\n')
    proc = project.ckdn("run", "ghost")
    assert proc.returncode == 127
    doc = project.digest(proc)
    assert doc["status"] == "error"
    assert any("no-such-tool-ckdn" in note for note in doc["notes"])
    assert not any("requires" in note for note in doc["notes"])  # none to name


def test_a_missing_executable_names_the_checks_requires_to_install(project: Project) -> None:
    project.config('[check.ghost]\ncommand = "no-such-tool-ckdn --x"\nparser = "generic"\n'
                   'requires = ["no-such-tool-ckdn==1.0", '
                   '"extra[plugin]>=2; python_version>\'3\'"]\n')
    doc = project.digest(project.ckdn("run", "ghost"))
    assert doc["status"] == "error"
    assert len(doc["notes"]) == 2
    assert doc["notes"][-1] == (
        "pip install no-such-tool-ckdn==1.0 \"extra[plugin]>=2; python_version>'3'\" (the "
        "check's requires), or run the check through tox or nox, which install them")


def test_a_coverage_check_whose_pytest_lacks_pytest_cov_says_so(project: Project) -> None:
    """pytest without pytest-cov refuses ``--cov`` (exit code 4) before writing a report."""
    (project.root / "test_one.py").write_text("def test_one():\n    pass\n")
    argv = [sys.executable, "-m", "pytest", "-p", "no:pytest_cov", "-p", "no:cacheprovider",
            "--cov=one", "--cov-report=xml:{run_dir}/coverage.xml", "test_one.py"]
    project.config(f'[check.cov]\ncommand = {json.dumps(argv)}\nparser = "coverage"\n')
    doc = project.digest(project.ckdn("run", "cov"))
    assert (doc["status"], doc["rc"]) == ("error", 4)
    assert doc["notes"] == [
        "no coverage report in the run directory (looked for coverage.json and coverage.xml; "
        "exit code 4): exit code 4 is pytest's usage error, it refused its arguments before "
        "running a test; --cov needs pytest-cov installed where the check runs"]
    assert any("unrecognized arguments: --cov=one" in line for line in doc["log_tail"])


def test_a_timeout_kills_the_check_and_exits_124(project: Project) -> None:
    code = "import pathlib, time; time.sleep(30); pathlib.Path('slept').touch()"
    project.config(f'[check.slow]\ncommand = """{py(code)}"""\n'
                   'parser = "generic"\ntimeout = 0.5\n')
    proc = project.ckdn("run", "slow")
    assert not (project.root / "slept").exists()  # stopped, not waited for
    assert proc.returncode == 124
    doc = project.digest(proc)
    assert doc["status"] == "error"
    assert doc["timed_out"] is True


def test_ctrl_c_stops_the_check_and_still_writes_the_evidence(project: Project) -> None:
    code = "import time; print('working', flush=True); time.sleep(30)"
    project.config(f'[check.long]\ncommand = """{py(code)}"""\nparser = "generic"\n')
    env = clean_env()
    proc = subprocess.Popen([PY, "-m", "ckdn", "run", "long"], cwd=project.root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        logs = list(project.runs.glob("*-long/full.log")) if project.runs.exists() else []
        if logs and logs[0].read_text():
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 130
    doc = json.loads(out)
    assert doc["status"] == "error"
    assert doc["interrupted"] is True
    (run_dir,) = project.run_dirs()
    assert {"full.log", "meta.json", "digest.json"} <= {p.name for p in run_dir.iterdir()}


def test_a_second_concurrent_run_of_one_check_is_refused(project: Project) -> None:
    code = "import time; print('x', flush=True); time.sleep(30)"
    project.config(f'[check.hold]\ncommand = """{py(code)}"""\nparser = "generic"\n'
                   "timeout = 20\n")
    env = clean_env()
    first = subprocess.Popen([PY, "-m", "ckdn", "run", "hold"], cwd=project.root, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not list(project.root.glob(".agent-runs/*-hold")):
            time.sleep(0.02)
        line = one_line_error(project.ckdn("run", "hold"))
        assert "hold" in line
        assert "running" in line
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=30)


def test_a_lock_left_by_a_killed_run_is_reclaimed_with_a_note(project: Project) -> None:
    code = "import time; print('x', flush=True); time.sleep(30)"
    project.config(f'[check.hold]\ncommand = """{py(code)}"""\nparser = "generic"\n')
    env = clean_env()
    first = subprocess.Popen([PY, "-m", "ckdn", "run", "hold"], cwd=project.root, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        logs = list(project.runs.glob("*-hold/full.log")) if project.runs.exists() else []
        if logs and logs[0].read_text():
            break
        time.sleep(0.02)
    os.killpg(first.pid, signal.SIGKILL)  # ckdn and its child: nothing cleans up
    first.communicate(timeout=10)
    project.config('[check.hold]\ncommand = "true"\nparser = "generic"\n')
    proc = project.ckdn("run", "hold")
    assert proc.returncode == 0
    doc = project.digest(proc)
    assert doc["status"] == "pass"
    assert any("lock" in note for note in doc["notes"]), doc


def test_a_100_mb_single_line_output_gives_a_digest_under_64_kib(project: Project) -> None:
    code = ("import sys; b = b'x' * (1 << 20)\n"
            "for _ in range(100): sys.stdout.buffer.write(b)\nraise SystemExit(1)")
    project.config(f'[check.huge]\ncommand = """{py(code)}"""\nparser = "generic"\n')
    proc = project.ckdn("run", "huge")
    assert proc.returncode == 1
    assert len(proc.stdout.encode()) < 64 * 1024
    doc = project.digest(proc)
    assert doc["log_tail"]
    assert all(len(line) < 2000 for line in doc["log_tail"])
    assert "chars]" in doc["log_tail"][-1]


def test_invalid_utf8_output_is_kept_on_disk_and_digested_readably(project: Project) -> None:
    code = "import sys; sys.stdout.buffer.write(b'bad \\xff\\xfe bytes\\n'); raise SystemExit(2)"
    project.config("[check.bytes]\ncommand = '''" + py(code) + "'''\nparser = 'generic'\n")
    proc = project.ckdn("run", "bytes")
    assert proc.returncode == 2
    doc = project.digest(proc)
    assert doc["log_tail"] == ["bad \ufffd\ufffd bytes"]
    (run_dir,) = project.run_dirs()
    assert (run_dir / "full.log").read_bytes() == b"bad \xff\xfe bytes\n"


def test_an_unwritable_runs_dir_is_refused_in_one_line(project: Project) -> None:
    (project.root / "blocker").write_text("a file where the runs dir should be")
    project.config('[run]\nruns_dir = "blocker/runs"\n[check.ok]\ncommand = "true"\n'
                   'parser = "generic"\n')
    line = one_line_error(project.ckdn("run", "ok"))
    assert "blocker" in line


def test_a_bad_config_is_refused_before_anything_runs(project: Project) -> None:
    project.config('[run]\nkeep = 2.5\n[check.ok]\ncommand = "touch ran"\nparser = "generic"\n')
    line = one_line_error(project.ckdn("run", "ok"))
    assert "keep" in line
    assert "ckdn.toml" in line
    assert not (project.root / "ran").exists()


def test_an_unknown_check_is_refused_with_a_suggestion(project: Project) -> None:
    project.config('[check.ruff]\ncommand = "true"\nparser = "generic"\n')
    line = one_line_error(project.ckdn("run", "ruf"))
    assert "ruff" in line


def test_a_missing_config_is_refused_and_points_at_init(project: Project) -> None:
    line = one_line_error(project.ckdn("run", "x"))
    assert "ckdn init" in line


def test_usage_errors_are_one_line_exit_2(project: Project) -> None:
    one_line_error(project.ckdn("run", "--no-such-flag"))
    one_line_error(project.ckdn("frobnicate"))


def test_an_unknown_option_points_at_the_help_of_its_verb(project: Project) -> None:
    line = one_line_error(project.ckdn("list", "--bogus"))
    assert line == "ckdn: unrecognized arguments: --bogus (see `ckdn list --help`)"
    assert one_line_error(project.ckdn("--bogus")).endswith("(see `ckdn --help`)")


def test_a_tool_option_before_the_double_dash_is_refused_with_the_command_to_type(
        project: Project) -> None:
    project.config('[check.ruff]\ncommand = "true"\nparser = "generic"\n')
    line = one_line_error(project.ckdn("run", "ruff", "--fix", "--unsafe-fixes"))
    assert line == ("ckdn: unrecognized arguments: --fix --unsafe-fixes; a tool's own arguments "
                    "go after --: `ckdn run ruff -- --fix --unsafe-fixes` "
                    "(see `ckdn run --help`)")
    assert not project.run_dirs()
    assert "ckdn run ruff --" not in one_line_error(project.ckdn("run", "--all", "--fix"))


def test_the_child_sees_its_run_dir_and_check_name(project: Project) -> None:
    code = ("import os, pathlib; d = os.environ['CKDN_RUN_DIR']; "
            "pathlib.Path(d, 'seen.txt').write_text(os.environ['CKDN_CHECK'] + ' ' + "
            "os.environ['WHERE'])")
    project.config(f'[check.env]\ncommand = """{py(code)}"""\nparser = "generic"\n'
                   '[check.env.env]\nWHERE = "{run_dir}/x"\n')
    proc = project.ckdn("run", "env")
    assert proc.returncode == 0, proc.stdout
    (run_dir,) = project.run_dirs()
    assert (run_dir / "seen.txt").read_text() == f"env {run_dir}/x"


def test_run_dir_is_substituted_in_argv(project: Project) -> None:
    code = "import sys, pathlib; pathlib.Path(sys.argv[1]).write_text('report')"
    project.config(f'[check.arg]\ncommand = """{py(code)} {{run_dir}}/report.txt"""\n'
                   'parser = "generic"\n')
    assert project.ckdn("run", "arg").returncode == 0
    (run_dir,) = project.run_dirs()
    assert (run_dir / "report.txt").read_text() == "report"


def test_extra_args_after_double_dash_reach_the_tool(project: Project) -> None:
    code = "import sys; sys.exit(int(sys.argv[1]))"
    project.config(f'[check.code]\ncommand = """{py(code)}"""\nparser = "generic"\n')
    assert project.ckdn("run", "code", "--", "7").returncode == 7


def test_meta_json_records_provenance(project: Project) -> None:
    code = "print('hello')"
    project.config(f'[check.hello]\ncommand = """{py(code)}"""\nparser = "generic"\n')
    project.ckdn("run", "hello")
    (run_dir,) = project.run_dirs()
    meta = json.loads((run_dir / "meta.json").read_text())
    import hashlib

    log = (run_dir / "full.log").read_bytes()
    assert meta["schema"] == "ckdn.meta/1"
    assert meta["command"] == [PY, "-c", code]
    assert meta["check"] == "hello"
    assert meta["parser"] == "generic"
    assert meta["rc"] == 0
    assert meta["log_sha256"] == hashlib.sha256(log).hexdigest()
    assert meta["log_bytes"] == len(log) == 6


def test_digests_are_byte_identical_for_identical_runs(project: Project) -> None:
    code = "print('same'); raise SystemExit(1)"
    project.config(f'[check.same]\ncommand = """{py(code)}"""\nparser = "generic"\n')
    first = project.ckdn("run", "same").stdout
    second = project.ckdn("run", "same").stdout
    a, b = project.run_dirs()
    assert first.replace(a.name, "RUN") == second.replace(b.name, "RUN")


def alias_config(project: Project, fail_fast: str = "") -> None:
    project.config(f"""
        [check.one]
        command = "true"
        parser = "generic"
        [check.two]
        command = "false"
        parser = "generic"
        [check.three]
        command = "true"
        parser = "generic"
        [check.group]
        members = ["one", "two", "three"]
        {fail_fast}
        """)


def test_an_alias_stops_at_the_first_red_member_and_lists_the_rest_skipped(
        project: Project) -> None:
    alias_config(project)
    proc = project.ckdn("run", "group")
    assert proc.returncode == 1
    doc = project.digest(proc)
    assert doc["schema"] == "ckdn.aggregate/1"
    assert doc["alias"] == "group"
    assert doc["status"] == "fail"
    assert [(m["check"], m["status"]) for m in doc["members"]] == [
        ("one", "pass"), ("two", "fail"), ("three", "skipped")]
    assert doc["members"][2] == {"check": "three", "status": "skipped"}


def test_fail_fast_false_runs_every_member(project: Project) -> None:
    alias_config(project, "fail_fast = false")
    doc = project.digest(project.ckdn("run", "group"))
    assert [m["status"] for m in doc["members"]] == ["pass", "fail", "pass"]


def test_the_command_line_overrides_fail_fast(project: Project) -> None:
    alias_config(project)
    doc = project.digest(project.ckdn("run", "group", "--no-fail-fast"))
    assert [m["status"] for m in doc["members"]] == ["pass", "fail", "pass"]


def test_run_all_runs_every_atomic_check(project: Project) -> None:
    alias_config(project)
    proc = project.ckdn("run", "--all")
    assert proc.returncode == 1
    doc = project.digest(proc)
    assert doc["alias"] == "*"
    assert [m["check"] for m in doc["members"]] == ["one", "two", "three"]
    assert doc["members"][2] == {"check": "three", "status": "pass", "rc": 0}


def test_extra_args_are_refused_for_an_alias(project: Project) -> None:
    alias_config(project)
    line = one_line_error(project.ckdn("run", "group", "--", "-x"))
    assert "alias" in line


def test_the_aggregate_is_stored_and_shown_later(project: Project) -> None:
    alias_config(project)
    printed = project.digest(project.ckdn("run", "group"))
    stored = [p for p in project.run_dirs() if (p / "aggregate.json").exists()]
    assert len(stored) == 1
    proc = project.ckdn("show", stored[0].name, "--json")
    assert json.loads(proc.stdout) == printed


def test_show_prints_the_latest_digest(project: Project) -> None:
    project.config('[check.bad]\ncommand = "false"\nparser = "generic"\n')
    printed = project.digest(project.ckdn("run", "bad"))
    proc = project.ckdn("show")
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == printed  # pretty, but the same document


def test_show_by_a_check_name_shows_that_checks_newest_run_not_the_latest(
        project: Project) -> None:
    project.config('[check.bad]\ncommand = "false"\nparser = "generic"\n'
                   '[check.ok]\ncommand = "true"\nparser = "generic"\n')
    project.ckdn("run", "bad")
    newest_bad = project.digest(project.ckdn("run", "bad"))
    project.ckdn("run", "ok")
    proc = project.ckdn("show", "bad", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == newest_bad
    assert "neither a run dir nor a check" in one_line_error(project.ckdn("show", "nothing"))


def test_show_refuses_a_reference_outside_the_runs_dir(project: Project) -> None:
    project.config('[check.ok]\ncommand = "true"\nparser = "generic"\n')
    project.ckdn("run", "ok")
    one_line_error(project.ckdn("show", "../../etc"))
    one_line_error(project.ckdn("show", "/etc"))


def test_list_json_shows_the_last_runs_oldest_first(project: Project) -> None:
    project.config('[check.ok]\ncommand = "true"\nparser = "generic"\n'
                   '[check.bad]\ncommand = "false"\nparser = "generic"\n')
    project.ckdn("run", "ok")
    project.ckdn("run", "bad")
    listing = json.loads(project.ckdn("list", "--json").stdout)
    assert list(listing) == ["runs"]
    rows = listing["runs"]
    assert [(r["check"], r["status"], r["rc"]) for r in rows] == [
        ("ok", "pass", 0), ("bad", "fail", 1)]
    assert {"run_id", "check", "status", "rc", "run_dir"} <= set(rows[0])
    assert rows[1]["run_dir"] == f".agent-runs/{rows[1]['run_id']}"
    (last,) = json.loads(project.ckdn("list", "-n", "1", "--json").stdout)["runs"]
    assert last["check"] == "bad"
    text = project.ckdn("list").stdout.splitlines()
    assert text == [f"{r['run_id']}\t{r['check']}\t{r['status']}" for r in rows]
    (summary,) = [line for line in project.ckdn("--help").stdout.splitlines()
                  if line.split()[:1] == ["list"]]
    assert "oldest first" in summary  # as it lists them; `ckdn --help` once said newest
    assert '{"runs": [...]}' in project.ckdn("list", "--help").stdout  # not "an array"


def test_list_marks_an_unfinished_run_and_a_corrupt_digest(project: Project) -> None:
    project.config('[check.ok]\ncommand = "true"\nparser = "generic"\n')
    (project.runs / "20260101T000000Z-ok").mkdir(parents=True)
    (project.runs / "20260101T000001Z-ok").mkdir()
    (project.runs / "20260101T000001Z-ok" / "digest.json").write_text("{not json")
    rows = json.loads(project.ckdn("list", "--json").stdout)["runs"]
    assert [(r["run_id"], r["status"]) for r in rows] == [
        ("20260101T000000Z-ok", "?"), ("20260101T000001Z-ok", "corrupt")]
    assert all("rc" not in r for r in rows)


def test_checks_json_lists_atomics_and_aliases(project: Project) -> None:
    alias_config(project)
    listing = json.loads(project.ckdn("checks", "--json").stdout)
    assert list(listing) == ["checks"]
    rows = listing["checks"]
    assert [(r["name"], r["kind"]) for r in rows] == [
        ("group", "alias"), ("one", "atomic"), ("three", "atomic"), ("two", "atomic")]
    assert rows[0] == {"name": "group", "kind": "alias", "members": ["one", "two", "three"],
                       "fail_fast": True}
    assert rows[1]["parser"] == "generic"
    assert isinstance(rows[1]["command"], str)
    text = project.ckdn("checks").stdout.splitlines()
    assert text[0] == "group\talias=one,two,three\tfail_fast=true"
    assert text[1] == f"one\tparser=generic\t{rows[1]['command']}"


def test_runs_beyond_keep_are_pruned(project: Project) -> None:
    project.config('[run]\nkeep = 2\n[check.ok]\ncommand = "true"\nparser = "generic"\n')
    for _ in range(4):
        assert project.ckdn("run", "ok").returncode == 0
    assert len(project.run_dirs()) == 2


def test_gc_keeps_the_asked_number_per_check(project: Project) -> None:
    project.config('[check.ok]\ncommand = "true"\nparser = "generic"\n')
    for _ in range(3):
        project.ckdn("run", "ok")
    proc = project.ckdn("gc", "--keep", "1")
    assert proc.returncode == 0
    assert len(project.run_dirs()) == 1


def test_init_writes_a_starter_config_that_loads(project: Project) -> None:
    proc = project.ckdn("init")
    assert proc.returncode == 0
    assert (project.root / "ckdn.toml").exists()
    checks = json.loads(project.ckdn("checks", "--json").stdout)["checks"]
    assert {"pytest", "ruff", "mypy", "lint"} <= {c["name"] for c in checks}
    line = one_line_error(project.ckdn("init"))
    assert "--force" in line


def test_init_enables_pre_commit_in_a_project_that_configures_it_but_not_in_lint(
        project: Project) -> None:
    assert project.ckdn("init").returncode == 0
    assert "pre_commit" not in project.ckdn("checks").stdout
    (project.root / ".pre-commit-config.yaml").write_text("repos: []\n")
    assert project.ckdn("init", "--force").returncode == 0
    checks = {c["name"]: c for c in json.loads(project.ckdn("checks", "--json").stdout)["checks"]}
    assert checks["pre_commit"]["command"] == "pre-commit run --all-files"
    assert checks["pre_commit"]["parser"] == "pre_commit"
    assert checks["lint"]["members"] == ["ruff", "mypy"]


def test_init_force_through_a_symlink_rewrites_its_target_and_leaves_no_temp_file(
        project: Project) -> None:
    (project.root / "shared.toml").write_text("# someone else's config\n")
    (project.root / "ckdn.toml").symlink_to("shared.toml")
    assert project.ckdn("init", "--force").returncode == 0
    assert (project.root / "ckdn.toml").is_symlink()
    assert (project.root / "shared.toml").read_text().startswith("# ckdn.toml:")
    assert sorted(p.name for p in project.root.iterdir()) == ["ckdn.toml", "shared.toml"]


def test_init_never_replaces_a_fifo_or_a_device_even_with_force(project: Project) -> None:
    os.mkfifo(project.root / "pipe.toml")
    line = one_line_error(project.ckdn("--config", "pipe.toml", "init", "--force"))
    assert "not a regular file" in line
    assert (project.root / "pipe.toml").is_fifo()


def test_schema_lists_ids_and_prints_one(project: Project) -> None:
    ids = project.ckdn("schema").stdout.split()
    assert ids == sorted(ids)
    assert {"ckdn.digest/2", "ckdn.aggregate/1", "ckdn.meta/1", "ckdn.diff/1",
            "ckdn.doctor/1", "ckdn.status/1", "ckdn.plan/1", "ckdn.change/1"} == set(ids)
    schema = json.loads(project.ckdn("schema", "ckdn.digest/2").stdout)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    one_line_error(project.ckdn("schema", "ckdn.baseline/1"))


def test_cwd_option_and_env_var_choose_where_checks_run(project: Project) -> None:
    sub = project.root / "sub"
    sub.mkdir()
    (sub / "ckdn.toml").write_text('[check.here]\ncommand = "touch marker"\nparser = "generic"\n')
    assert project.ckdn("--cwd", "sub", "run", "here").returncode == 0
    assert (sub / "marker").exists()
    assert (sub / ".agent-runs").is_dir()
    (sub / "marker").unlink()
    assert project.ckdn("run", "here", env={"CKDN_CWD": str(sub)}).returncode == 0
    assert (sub / "marker").exists()


def test_relative_paths_resolve_from_the_invocation_cwd_not_the_configs_folder(
        project: Project) -> None:
    conf = project.root / "conf"
    conf.mkdir()
    (conf / "ckdn.toml").write_text('[run]\nruns_dir = "evidence"\n'
                                    '[check.ok]\ncommand = "true"\nparser = "generic"\n')
    assert project.ckdn("--config", "conf/ckdn.toml", "run", "ok").returncode == 0
    assert (project.root / "evidence").is_dir()
    assert not (conf / "evidence").exists()


def test_python_dash_m_and_the_console_script_agree(project: Project) -> None:
    script = Path(sys.executable).with_name("ckdn")
    if not script.exists():
        pytest.skip("console script not installed next to this interpreter")
    out = subprocess.run([str(script), "--version"], capture_output=True, text=True, check=True)
    assert out.stdout == project.ckdn("--version").stdout


def test_nothing_but_the_digest_reaches_stdout_and_nothing_reaches_stderr(
        project: Project) -> None:
    code = "import sys; print('to stdout'); print('to stderr', file=sys.stderr)"
    project.config(f'[check.noisy]\ncommand = """{py(code)}"""\nparser = "generic"\n')
    proc = project.ckdn("run", "noisy")
    assert proc.stderr == ""
    assert "to stdout" not in proc.stdout
    (run_dir,) = project.run_dirs()
    assert sorted((run_dir / "full.log").read_text().splitlines()) == ["to stderr", "to stdout"]


def test_quiet_prints_nothing_on_pass_and_the_digest_otherwise(project: Project) -> None:
    project.config('[check.ok]\ncommand = "true"\nparser = "generic"\n'
                   '[check.bad]\ncommand = "false"\nparser = "generic"\n')
    assert project.ckdn("run", "ok", "--quiet").stdout == ""
    assert project.digest(project.ckdn("run", "bad", "--quiet"))["status"] == "fail"


def test_an_unexpected_failure_is_one_line_and_exit_2_never_a_traceback(
        project: Project, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from ckdn import app, cli

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    project.config('[check.ok]\ncommand = "true"\nparser = "generic"\n')
    monkeypatch.chdir(project.root)
    monkeypatch.delenv("CKDN_DEBUG", raising=False)
    monkeypatch.setattr(app, "run", broken)
    assert cli.main(["run", "ok"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == ("ckdn: internal error: RuntimeError: a bug (rerun with CKDN_DEBUG=1 for the "
                   "traceback, and report it if it is not about your system)\n")
    monkeypatch.setenv("CKDN_DEBUG", "1")
    with pytest.raises(RuntimeError, match="a bug"):
        cli.main(["run", "ok"])


def test_the_program_flushes_its_output_and_skips_interpreter_teardown(project: Project) -> None:
    """`ckdn` ends with os._exit (start-up, docs/performance.md): output complete, no atexit."""
    project.config('[check.ok]\ncommand = "true"\nparser = "generic"\n')
    probe = ("import atexit, sys\n"
             "atexit.register(lambda: sys.stderr.write('teardown ran'))\n"
             "sys.argv = ['ckdn', 'run', 'ok']\n"
             "sys.stdout.write('before ')\n"  # buffered: only the exit's flush writes it
             "from ckdn.cli import main\nmain()\n")
    proc = subprocess.run([PY, "-c", probe], cwd=project.root, capture_output=True, text=True,
                          check=False, env=clean_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("before {")
    assert json.loads(proc.stdout[7:])["status"] == "pass"
    assert proc.stderr == ""


def test_a_host_calling_main_gets_the_code_back_and_keeps_its_collector(project: Project) -> None:
    project.config('[check.bad]\ncommand = "false"\nparser = "generic"\n')
    probe = ("import gc\nfrom ckdn.cli import main\n"
             "code = main(['--cwd', '.', 'run', '-q', 'bad'])\n"
             "print('host', code, gc.isenabled())\n")
    proc = subprocess.run([PY, "-c", probe], cwd=project.root, capture_output=True, text=True,
                          check=False, env=clean_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "host 1 True"


# -- what `ckdn show` means by latest ---------------------------------------------------


def test_show_after_an_alias_shows_its_red_aggregate_not_the_last_members_green(
        project: Project) -> None:
    alias_config(project, "fail_fast = false")  # one passes, two fails, three passes
    printed = project.digest(project.ckdn("run", "group"))
    proc = project.ckdn("show", "--json")
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert shown == printed
    assert (shown["alias"], shown["status"]) == ("group", "fail")


def test_show_after_run_all_shows_the_all_aggregate(project: Project) -> None:
    alias_config(project)
    printed = project.digest(project.ckdn("run", "--all"))
    assert printed["members"][-1]["status"] == "pass"
    shown = json.loads(project.ckdn("show", "--json").stdout)
    assert (shown["alias"], shown["status"]) == ("*", "fail")


def start_and_kill(project: Project, *args: str, wait_for: str) -> None:
    """Start ``ckdn ARGS``, wait until the log matching ``wait_for`` has output, SIGKILL the
    whole session (ckdn and its child): nothing gets to clean up."""
    proc = subprocess.Popen([PY, "-m", "ckdn", *args], cwd=project.root, env=clean_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        logs = list(project.runs.glob(wait_for)) if project.runs.exists() else []
        if logs and logs[0].read_text():
            break
        time.sleep(0.02)
    else:
        raise AssertionError(f"no output in {wait_for}")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=10)


SLEEPER = py("import time; print('working', flush=True); time.sleep(30)")


def test_show_after_a_newer_run_was_killed_names_it_unfinished_not_an_older_green(
        project: Project) -> None:
    project.config(f'[check.ok]\ncommand = "true"\nparser = "generic"\n'
                   f'[check.hold]\ncommand = """{SLEEPER}"""\nparser = "generic"\n')
    assert project.ckdn("run", "ok").returncode == 0
    start_and_kill(project, "run", "hold", wait_for="*-hold/full.log")
    (killed,) = [p for p in project.run_dirs() if p.name.endswith("-hold")]
    line = one_line_error(project.ckdn("show"))
    assert f".agent-runs/{killed.name}" in line
    assert "unfinished" in line
    assert f".agent-runs/{killed.name}/full.log" in line
    one_line_error(project.ckdn("show", "--json"))


def test_show_while_an_alias_member_was_killed_mid_alias_names_the_unfinished_run(
        project: Project) -> None:
    project.config(f'[check.ok]\ncommand = "true"\nparser = "generic"\n'
                   f'[check.hold]\ncommand = """{SLEEPER}"""\nparser = "generic"\n'
                   '[check.both]\nmembers = ["ok", "hold"]\n')
    start_and_kill(project, "run", "both", wait_for="*-hold/full.log")
    line = one_line_error(project.ckdn("show"))
    assert "unfinished" in line
    assert "-ok" not in line


def test_show_after_a_pytest_session_died_with_os_exit_names_it_unfinished(
        project: Project) -> None:
    project.config('[check.ok]\ncommand = "true"\nparser = "generic"\n')
    assert project.ckdn("run", "ok").returncode == 0
    (project.root / "test_dies.py").write_text(
        "import os\n\ndef test_dies():\n    os._exit(3)\n")
    proc = subprocess.run([PY, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider",
                           *UNUSED_PLUGINS, "--ckdn-digest", "test_dies.py"], cwd=project.root,
                          env=clean_env(), capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    (died,) = [p for p in project.run_dirs() if p.name.endswith("-pytest")]
    assert not (died / "digest.json").exists()
    line = one_line_error(project.ckdn("show"))
    assert f".agent-runs/{died.name}" in line
    assert "unfinished" in line


# -- nothing in the runs dir is read through a symlink ----------------------------------


def test_show_refuses_a_digest_that_is_a_symlink_to_a_file_outside(project: Project) -> None:
    project.config('[check.bad]\ncommand = "false"\nparser = "generic"\n')
    project.ckdn("run", "bad")
    (run_dir,) = project.run_dirs()
    secret = project.root / "secret.json"
    secret.write_text(json.dumps({"check": "x", "status": "pass", "rc": 0, "run_dir": "x",
                                  "token": "s3cret-token"}))
    (run_dir / "digest.json").unlink()
    (run_dir / "digest.json").symlink_to(secret)
    for args in (("show",), ("show", run_dir.name), ("show", "--json")):
        line = one_line_error(project.ckdn(*args))
        assert "symlink" in line
        assert "s3cret" not in line
    assert "s3cret" not in project.ckdn("list", "--json").stdout


def test_a_check_that_swaps_its_log_for_a_symlink_leaks_nothing_into_the_digest(
        project: Project) -> None:
    secret = project.root / "passwd"
    secret.write_text("root:x:0:0:root:/root:/bin/sh\n")
    code = ("import os, sys; log = os.path.join(os.environ['CKDN_RUN_DIR'], 'full.log'); "
            f"os.remove(log); os.symlink({str(secret)!r}, log); sys.exit(1)")
    project.config(f'[check.swap]\ncommand = """{py(code)}"""\nparser = "generic"\n')
    proc = project.ckdn("run", "swap")
    assert proc.returncode == 1, proc.stderr
    doc = project.digest(proc)
    assert "root:" not in proc.stdout
    assert "log_tail" not in doc
    assert "log tail unavailable: full.log is a symlink, not followed" in doc["notes"]


def test_a_symlinked_locks_dir_refuses_the_run_and_nothing_is_made_outside(
        project: Project) -> None:
    project.config('[check.ok]\ncommand = "touch ran"\nparser = "generic"\n')
    elsewhere = project.root / "elsewhere"
    elsewhere.mkdir()
    project.runs.mkdir()
    (project.runs / ".locks").symlink_to(elsewhere)
    line = one_line_error(project.ckdn("run", "ok"))
    assert ".agent-runs/.locks is a symlink" in line
    assert list(elsewhere.iterdir()) == []
    assert not (project.root / "ran").exists()


def test_the_runs_dir_ckdn_creates_carries_a_gitignore_of_everything(project: Project) -> None:
    project.config('[check.ok]\ncommand = "true"\nparser = "generic"\n')
    assert project.ckdn("run", "ok").returncode == 0
    text = (project.runs / ".gitignore").read_text()
    assert [line for line in text.splitlines() if not line.startswith("#")] == ["*"]
    git = subprocess.run(["git", "init", "-q", str(project.root)], check=False,
                         capture_output=True)
    if git.returncode == 0:
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                                cwd=project.root, capture_output=True, text=True, check=True)
        assert ".agent-runs" not in status.stdout
        assert "ckdn.toml" in status.stdout


# -- nothing printed can act on a terminal -----------------------------------------------

#: C0 and C1 controls (ESC, BEL, CSI, OSC, NEL), bidi controls, a line separator.
ACTING = "\x1b\x07\x9b\x9d\x85\u202e\u2066\u2069\u200e\u200f\u061c\u2028"


def assert_inert(text: str) -> None:
    assert not set(ACTING) & set(text), ascii(text)


def test_acting_characters_a_tool_prints_reach_no_document_and_no_output_raw(
        project: Project) -> None:
    (project.root / "evil.py").write_text(
        "import sys\n"
        "sys.stdout.write('a\\x9b31mb\\x9d0;title\\x07c\\x85d\\u202ee\\u2066f\\x1b\\n')\n"
        "sys.exit(1)\n")
    project.config(f'[check.evil]\ncommand = "{PY} evil.py"\nparser = "generic"\n')
    proc = project.ckdn("run", "evil")
    assert proc.returncode == 1, proc.stderr
    assert_inert(proc.stdout)
    doc = project.digest(proc)
    assert doc["log_tail"] == [
        "a\\u009b31mb\\u009d0;title\\u0007c\\u0085d\\u202ee\\u2066f\\u001b"]
    (run_dir,) = project.run_dirs()
    assert_inert((run_dir / "digest.json").read_text())
    for args in (("show",), ("show", "--json"), ("list",), ("list", "--json")):
        shown = project.ckdn(*args)
        assert shown.returncode == 0, shown.stderr
        assert_inert(shown.stdout)
    assert json.loads(project.ckdn("show").stdout) == doc


def test_a_planted_digest_and_run_dir_name_are_shown_inert_and_read_back_unchanged(
        project: Project) -> None:
    project.config('[check.ok]\ncommand = "true"\nparser = "generic"\n')
    name = "20260101T000000Z-x\x1b]0;owned\x07\u202e"
    planted = project.runs / name
    planted.mkdir(parents=True)
    doc = {"schema": "ckdn.digest/2", "check": "x\x9b2J", "status": "fail\u202e",
           "status_reason": "r\x85\u2066", "rc": 1, "run_dir": f".agent-runs/{name}"}
    (planted / "digest.json").write_text(json.dumps(doc, ensure_ascii=False))
    for args in (("show", name), ("show", name, "--json"), ("list",), ("list", "--json")):
        proc = project.ckdn(*args)
        assert proc.returncode == 0, proc.stderr
        assert_inert(proc.stdout)
    assert json.loads(project.ckdn("show", name).stdout) == doc
    assert json.loads(project.ckdn("show", name, "--json").stdout) == doc
    (row,) = json.loads(project.ckdn("list", "--json").stdout)["runs"]
    assert (row["run_dir"], row["status"]) == (f".agent-runs/{name}", "fail\u202e")
    text = project.ckdn("list").stdout
    assert "fail\\u202e" in text
    assert "x\\u001b]0;owned\\u0007\\u202e" in text


def test_checks_shows_a_configured_command_inert(project: Project) -> None:
    project.config('[check.sneaky]\ncommand = "echo \\u202e \\u009b31m \\u0007"\n'
                   'parser = "generic"\ndescription = "d\\u2066"\n')
    text = project.ckdn("checks")
    assert text.returncode == 0, text.stderr
    assert_inert(text.stdout)
    assert "echo \\u202e \\u009b31m \\u0007" in text.stdout
    proc = project.ckdn("checks", "--json")
    assert_inert(proc.stdout)
    (row,) = json.loads(proc.stdout)["checks"]
    assert row["command"] == "echo \u202e \u009b31m \u0007"
    assert row["description"] == "d\u2066"


# -- the standard streams ------------------------------------------------------------------


def ckdn_sh(project: Project, redirect: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m ckdn ARGS REDIRECT`` as a shell runs it (``>&-`` closes stdout)."""
    line = f'exec "$0" -m ckdn "$@" {redirect}'
    return subprocess.run(["sh", "-c", line, PY, *args], cwd=project.root, env=clean_env(),
                          capture_output=True, text=True, timeout=60, check=False)


def test_a_closed_stdout_is_refused_in_one_line_before_anything_runs(project: Project) -> None:
    project.config('[check.t]\ncommand = "touch ran"\nparser = "generic"\n')
    for args in (("run", "t"), ("show",), ("list",), ("checks",)):
        proc = ckdn_sh(project, ">&-", *args)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr == ("ckdn: stdout is closed, and ckdn prints its document there;"
                               " redirect it instead (to /dev/null to discard it)\n")
    assert not (project.root / "ran").exists()


def test_a_closed_stderr_still_runs_and_prints_the_document(project: Project) -> None:
    project.config('[check.t]\ncommand = "true"\nparser = "generic"\n'
                   '[check.f]\ncommand = "false"\nparser = "generic"\n')
    proc = ckdn_sh(project, "2>&-", "run", "t")
    assert proc.returncode == 0
    assert project.digest(proc)["status"] == "pass"
    proc = ckdn_sh(project, "2>&-", "run", "f")
    assert proc.returncode == 1
    assert project.digest(proc)["status"] == "fail"
    assert ckdn_sh(project, "2>&-", "run", "nope").returncode == 2  # its one line went nowhere


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_a_stdout_that_cannot_be_written_is_one_line_and_exit_2(project: Project) -> None:
    project.config('[check.t]\ncommand = "true"\nparser = "generic"\n')
    proc = ckdn_sh(project, ">/dev/full", "run", "t")
    assert proc.returncode == 2
    assert proc.stderr == "ckdn: cannot write to stdout: No space left on device [Errno 28]\n"


def test_the_documented_unfinished_line_is_what_show_prints(project: Project) -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    documented = page.split("## `show`")[1].split("```console\n$ ckdn show\n")[1]
    documented = documented.split("\n")[0]
    project.config(f'[check.pytest]\ncommand = """{SLEEPER}"""\nparser = "generic"\n')
    start_and_kill(project, "run", "pytest", wait_for="*-pytest/full.log")
    (killed,) = project.run_dirs()
    line = one_line_error(project.ckdn("show"))
    assert line == documented.replace("20261129T141502Z-pytest", killed.name)


def test_while_an_alias_runs_latest_is_the_alias_run_not_a_finished_member(
        project: Project) -> None:
    probe = py("import os; open('seen', 'w').write(os.readlink('.agent-runs/latest'))")
    project.config(f'[check.ok]\ncommand = "true"\nparser = "generic"\n'
                   f'[check.probe]\ncommand = """{probe}"""\nparser = "generic"\n'
                   '[check.both]\nmembers = ["ok", "probe"]\n')
    printed = project.digest(project.ckdn("run", "both"))
    assert printed["status"] == "pass"
    seen = (project.root / "seen").read_text()
    assert seen.endswith("-both")
    assert (project.runs / seen / "aggregate.json").exists()


def test_show_names_an_alias_run_killed_between_members_as_unfinished(
        project: Project) -> None:
    from ckdn.app import load_config
    from ckdn.store import Store

    project.config('[check.ok]\ncommand = "true"\nparser = "generic"\n')
    config = load_config(project.root)
    store = Store(config.run.runs_dir, project.root)
    alias = store.new_dir("both")
    store.publish(alias)  # what an alias run does first; it died before its aggregate
    line = one_line_error(project.ckdn("show"))
    assert line == (f"ckdn: .agent-runs/{os.path.basename(alias)} is unfinished: nothing"
                    " written yet (it is still running, or it was killed); `ckdn list` shows"
                    " the runs beside it")


# -- --config and --cwd ---------------------------------------------------------------------


def test_config_is_read_from_the_process_cwd_and_cwd_is_where_checks_run(
        project: Project) -> None:
    """``ckdn --cwd proj --config sub.toml run here``: ``./sub.toml`` configures it, the
    check runs in ``proj``, and the runs dir is ``proj/.agent-runs``."""
    proj = project.root / "proj"
    proj.mkdir()
    (proj / "sub.toml").write_text('[check.wrong]\ncommand = "true"\nparser = "generic"\n')
    (project.root / "sub.toml").write_text(
        f'[check.here]\ncommand = """{py("import os; print(os.getcwd())")}"""\n'
        'parser = "generic"\n')
    proc = project.ckdn("--cwd", "proj", "--config", "sub.toml", "run", "here")
    assert proc.returncode == 0, proc.stderr
    doc = project.digest(proc)
    assert doc["run_dir"].startswith(".agent-runs/")
    (run_dir,) = (proj / ".agent-runs").glob("*-here")
    assert (run_dir / "full.log").read_text().strip() == str(proj)
    missing = project.ckdn("--cwd", "proj", "--config", "nope.toml", "checks")
    assert missing.returncode == 2
    assert missing.stderr == ("ckdn: nope.toml: no such config file (named by --config; "
                              f"looked for {project.root / 'nope.toml'})\n")
