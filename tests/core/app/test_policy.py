"""The command policy: which argv may start, with the rules docs/security.md lists.

The unit tests ask the one policy function (:func:`ckdn.app._running.policy.verdict`) about
argv; the CLI tests run the real ``ckdn`` and real programs (python, ruff) and read
the run dir a blocked command leaves.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.app import load_config, run
from ckdn.app._running.policy import FORBIDDEN_HOME, FORBIDDEN_ROOTS, STREAM_DEVICES, verdict
from tests.project import Project


def config_of(root: Path, command: str | list[str], run: str = "", env: str = "") -> object:
    line = toml_value(command)
    (root / "ckdn.toml").write_text(
        f"[run]\n{run}\n[check.c]\ncommand = {line}\nparser = \"generic\"\n{env}\n")
    return load_config(root)


def toml_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(f"\\u{ord(c):04x}" if ord(c) < 0x20 or ord(c) == 0x7f else c
                         for c in escaped) + '"'


def toml_value(command: str | list[str]) -> str:
    if isinstance(command, str):
        return toml_string(command)
    return "[" + ", ".join(map(toml_string, command)) + "]"


def judge(root: Path, command: str | list[str], *, run: str = "", env: str = "",
          child: dict[str, str] | None = None) -> str | None:
    config = config_of(root, command, run, env)
    check = config.checks["c"]  # type: ignore[attr-defined]
    run_dir = os.path.join(config.run.runs_dir, "RUN")  # type: ignore[attr-defined]
    argv = [a.replace("{run_dir}", run_dir) for a in check.argv]
    base = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/root")}
    return verdict(config, check, argv, run_dir, {**base, **(child or {})})  # type: ignore[arg-type]


@pytest.mark.parametrize("command", [
    "ruff check --output-format json --output-file {run_dir}/ruff.json .",
    "pytest -q --junitxml {run_dir}/junit.xml src/pkg tests/test_a.py::test_b[x/y]",
    "mypy --output json --cache-dir=.mypy_cache -Isrc",
    "coverage report --data-file=.coverage -m",
    "pip-audit --index-url https://pypi.org/simple -f json -o {run_dir}/a.json",
    "pip install --index-url=https://etc.example/simple git+https://host/etc/x.git",
    f"{sys.executable} -c pass",
    "/usr/bin/env true",
    "python -m pytest -p no:cacheprovider -k 'a or b'",
])
def test_ordinary_commands_are_allowed_by_the_workspace_policy(tmp_path: Path,
                                                              command: str) -> None:
    assert judge(tmp_path, command) is None


@pytest.mark.parametrize(("command", "token", "rule"), [
    ("cat /etc/hostname", "'/etc/hostname'", "is under /etc"),
    ("cat //etc//hostname", "'//etc//hostname'", "is under /etc"),
    ("cat ../../../../../../../etc/hostname", "'../../../../../../../etc/hostname'",
     "is under /etc"),
    ("gcc -I/etc x.c", "option value '/etc' of '-I/etc'", "is under /etc"),
    ("tool --config=/proc/self/environ", "option value '/proc/self/environ'", "is under /proc"),
    ("tool --cov-report=xml:/sys/x", "part '/sys/x'", "is under /sys"),
    ("tool -o/dev/tcp/1.2.3.4/80", "'/dev/tcp/1.2.3.4/80'", "is under /dev"),
    ("tool file:///etc/passwd", "'/etc/passwd'", "is under /etc"),
    ("gcc @/etc/opts x.c", "response file '/etc/opts' of '@/etc/opts'", "is under /etc"),
    ("cat ../outside.txt", "'../outside.txt'", "resolves outside the working directory"),
    ("cat /tmp", "'/tmp'", "resolves outside the working directory"),
])
def test_each_spelling_of_a_place_outside_is_blocked_naming_the_token_and_the_rule(
        tmp_path: Path, command: str, token: str, rule: str) -> None:
    why = judge(tmp_path, command)
    assert why is not None
    assert why.startswith("blocked by the command policy (workspace): ")
    assert token in why
    assert rule in why


@pytest.mark.parametrize("secret", FORBIDDEN_HOME)
def test_the_home_secrets_are_blocked_even_when_the_cwd_is_home(tmp_path: Path,
                                                                secret: str) -> None:
    child = {"HOME": str(tmp_path)}
    why = judge(tmp_path, f"cat {secret}/x", child=child)
    assert why is not None
    assert f"is under {tmp_path / secret}" in why
    assert judge(tmp_path, f"cat ~/{secret}", child=child) is not None


def test_a_symlink_in_the_cwd_must_resolve_inside_it(tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("x")
    (tmp_path / "inside.txt").write_text("x")
    (tmp_path / "leak").symlink_to(outside)
    (tmp_path / "ok").symlink_to(tmp_path / "inside.txt")
    (tmp_path / "host").symlink_to("/etc/hostname")
    why = judge(tmp_path, "cat leak")
    assert why is not None
    assert "'leak' resolves outside" in why
    assert "through a link" in why
    assert "is under /etc" in (judge(tmp_path, "cat host") or "")
    assert "is under /etc" in (judge(tmp_path, "cat --file=host") or "")
    assert judge(tmp_path, "cat ok inside.txt") is None


def test_a_runs_dir_outside_the_cwd_is_allowed_for_run_dir(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    run = f'runs_dir = "{tmp_path / "runs"}"'
    assert judge(project, "tool --out={run_dir}/x.json -o {run_dir}/y", run=run) is None
    assert judge(project, f"tool {tmp_path / 'runs' / 'other'}", run=run) is not None


@pytest.mark.parametrize("name", ["LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES"])
def test_an_env_that_loads_code_into_the_program_is_refused(tmp_path: Path, name: str) -> None:
    why = judge(tmp_path, "true", env=f'env = {{ {name} = "x.so" }}')
    assert why is not None
    assert f"env sets {name}" in why


def test_an_absolute_program_runs_only_from_the_cwd_or_the_checks_path(tmp_path: Path) -> None:
    tools = tmp_path.parent / f"{tmp_path.name}-tools"
    tools.mkdir()
    program = tools / "tool"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    why = judge(tmp_path, str(program))
    assert why is not None
    assert "outside the working directory and in no directory on the" \
        " check's PATH" in why
    assert judge(tmp_path, str(program), child={"PATH": f"/usr/bin:{tools}"}) is None
    assert judge(tmp_path, str(program), env=f'env = {{ PATH = "{tools}" }}',
                 child={"PATH": str(tools)}) is None
    (tmp_path / "bin").mkdir()
    shutil.copy(program, tmp_path / "bin" / "tool")
    assert judge(tmp_path, "bin/tool") is None
    assert judge(tmp_path, "./bin/tool") is None
    assert "program '/proc/self/exe' is under /proc" in (judge(tmp_path, "/proc/self/exe") or "")


def test_the_interpreter_running_ckdn_and_the_systems_python_are_allowed(tmp_path: Path) -> None:
    assert judge(tmp_path, [sys.executable, "-c", "pass"], child={"PATH": "/nowhere"}) is None
    system = shutil.which("python3", path="/usr/bin:/bin")
    if system is None:
        pytest.skip("no python3 in /usr/bin")
    assert judge(tmp_path, f"{system} -c pass") is None


def test_the_allowlist_admits_its_prefixes_then_confines_their_paths(tmp_path: Path) -> None:
    run = ('command_policy = "allowlist"\n[run.command_allowlist]\n'
           'prefixes = ["ruff check", "python -m"]')
    assert judge(tmp_path, "ruff check .", run=run) is None
    assert judge(tmp_path, ".venv/bin/ruff check src", run=run) is None
    assert judge(tmp_path, "python -m pytest", run=run) is None
    why = judge(tmp_path, "ruff format .", run=run)
    assert why is not None
    assert "starts with none of [run.command_allowlist] prefixes" in why
    assert judge(tmp_path, "ruffian check", run=run) is not None  # words, not characters
    why = judge(tmp_path, "ruff check /etc", run=run)
    assert why is not None
    assert why.startswith("blocked by the command policy (allowlist): ")
    assert "is under /etc" in why


def test_off_lets_every_command_run(tmp_path: Path) -> None:
    assert judge(tmp_path, "cat /etc/hostname ../x", run='command_policy = "off"',
                 env='env = { LD_PRELOAD = "x" }') is None


# -- the invariant, over generated spellings -------------------------------------------

_TARGETS = ["/etc/passwd", "/etc", "/proc/1/environ", "/sys/kernel", "/dev/sda",
            "~/.ssh/id_rsa", "~/.aws/credentials", "~/.netrc", "~/.kube/config"]


@st.composite
def spellings(draw: st.DrawFn, cwd: str) -> str:
    """A forbidden target spelled as one argv token: absolute, with ``//`` and ``/./``
    in it, as a ``../`` climb from the cwd, glued to a short option, as ``--x=``'s value,
    after ``xml:`` or in a comma list."""
    target = draw(st.sampled_from(_TARGETS))
    if target.startswith("~/") and draw(st.booleans()):
        target = os.path.expanduser(target)
    if target.startswith("/"):
        parts = target.strip("/").split("/")
        slashes = [draw(st.sampled_from(["/", "//", "/./", "///"])) for _ in parts]
        target = "".join(s + p for s, p in zip(slashes, parts, strict=True))
        if draw(st.booleans()):
            depth = len(Path(cwd).parts) - 1 + draw(st.integers(0, 3))
            target = "../" * depth + target.lstrip("/")
    wrap = draw(st.sampled_from(["{}", "-I{}", "-o{}", "--x={}", "--cov-report=xml:{}",
                                 "--files=a,{}", "-D=a:{}", "file://{}", "@{}"]))
    return wrap.format(target)


@given(data=st.data())
def test_no_spelling_of_a_forbidden_place_is_ever_allowed(tmp_path: Path,
                                                          data: st.DataObject) -> None:
    token = data.draw(spellings(str(tmp_path)))
    assert judge(tmp_path, ["tool", token]) is not None, token


@given(word=st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\0"),
                    max_size=30))
def test_a_token_that_mentions_a_forbidden_root_outside_a_url_never_passes(
        tmp_path: Path, word: str) -> None:
    for root in FORBIDDEN_ROOTS:
        if f"{root}/{word}" in STREAM_DEVICES:  # /dev/null and its kin, named exactly, may pass
            continue
        assert judge(tmp_path, ["tool", f"--x={root}/{word}"]) is not None


# -- the CLI: a blocked command leaves its evidence, and nothing ran ---------------------

def test_a_blocked_command_leaves_an_empty_log_rc_126_and_a_note_and_never_ran(
        project: Project) -> None:
    marker = project.root / "ran"
    code = f"open({str(marker)!r}, 'w')"
    project.config(f"""
        [check.leak]
        command = {json.dumps(shlex.join([sys.executable, "-c", code, "/etc/hostname"]))}
        parser = "generic"
    """)
    proc = project.ckdn("run", "leak")
    assert proc.returncode == 126, proc.stderr
    doc = project.digest(proc)
    assert doc["status"] == "error"
    assert doc["rc"] == 126
    assert any("blocked by the command policy (workspace): argument '/etc/hostname' is under"
               " /etc" in note for note in doc["notes"])
    run_dir = project.root / doc["run_dir"]
    assert (run_dir / "full.log").read_bytes() == b""
    assert not marker.exists()
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["rc"] == 126
    assert meta["log_bytes"] == 0


def test_real_tools_run_under_the_default_policy(project: Project) -> None:
    (project.root / "mod.py").write_text("x = 1\n")
    project.config("""
        [check.ruff]
        command = "ruff check --output-format json --output-file {run_dir}/ruff.json ."
        parser = "ruff"
    """)
    # the dev extra's ruff, on PATH as an activated venv puts it (not only when it is)
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    proc = project.ckdn("run", "ruff", env={"PATH": path})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert project.digest(proc)["status"] == "pass"


def test_a_runs_dir_outside_the_project_takes_the_report_of_a_real_run(
        project: Project, tmp_path: Path) -> None:
    runs = tmp_path.parent / f"{tmp_path.name}-runs"
    project.config(f"""
        [run]
        runs_dir = "{runs}"
        [check.py]
        command = {json.dumps(shlex.join([sys.executable, "-c",
                  "import sys; open(sys.argv[1], 'w').write('x')", "{run_dir}/out.txt"]))}
        parser = "generic"
    """)
    proc = project.ckdn("run", "py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (runs / "latest" / "out.txt").read_text() == "x"


# -- doctor and run: one function, one verdict ----------------------------------------------

AGREEMENT = [
    "true",
    "true /etc/hostname",
    "true {run_dir}/report.json --out={run_dir}/x",
    "true ../elsewhere",
    "true -I/etc",
    "true leak",
    "/bin/true",
    f"{sys.executable} -c pass",
    "true --config=file:///etc/passwd",
    "true ~/.ssh/id_rsa",
]


@pytest.mark.parametrize("command", AGREEMENT)
def test_doctor_and_run_give_every_command_the_same_verdict(tmp_path: Path, command: str) -> None:
    from ckdn import app
    from ckdn.app.doctor import diagnose

    project = tmp_path / "p"
    project.mkdir()
    (project / "leak").symlink_to(tmp_path)
    runs = f'runs_dir = "{tmp_path / "runs"}"'  # outside the cwd: {run_dir} is still allowed
    config = config_of(project, command, runs)
    report = diagnose(config)  # type: ignore[arg-type]
    [verdict_of] = report["checks"]
    outcome = app.run(config, "c")  # type: ignore[arg-type]
    blocked = [n for n in outcome.digest.get("notes", []) if n.startswith("blocked by")]
    assert (verdict_of["verdict"] == "blocked") == (outcome.exit_code == 126) == bool(blocked)
    if blocked:
        assert blocked == [verdict_of["reason"]]


@given(name=st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12).filter(
           lambda n: n != "sub"),
       target=st.sampled_from(["/etc", "/etc/hostname", "/proc/self", "/dev", "/tmp", "/"]),
       wrap=st.sampled_from(["{}", "./{}", "{}/", "{}/x", "-I{}", "--x={}", "--x=a:{}/y",
                             "sub/../{}", "./sub/../{}/z"]))
def test_no_spelling_of_a_symlink_out_of_the_cwd_is_ever_allowed(name: str, target: str,
                                                                 wrap: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="policy-links-") as tmp:
        root = Path(tmp)
        (root / "sub").mkdir()
        (root / name).symlink_to(target)
        assert judge(root, ["tool", wrap.format(name)]) is not None, (name, target, wrap)


_SAFE = st.text("abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=8).filter(
    lambda part: part not in {"-", "--"} and not part.startswith("-"))


@given(parts=st.lists(_SAFE, min_size=1, max_size=5), dot=st.booleans(),
       wrap=st.sampled_from(["{}", "--x={}", "-I{}", "--cov-report=xml:{}", "{{run_dir}}/{}"]))
def test_a_path_inside_the_project_or_the_run_dir_is_always_allowed(
        tmp_path: Path, parts: list[str], dot: bool, wrap: str) -> None:
    path = ("./" if dot else "") + "/".join(parts)
    assert judge(tmp_path, ["tool", wrap.format(path)]) is None, path


def test_a_url_inside_a_program_text_names_no_path_but_a_path_after_it_still_does(
        tmp_path: Path) -> None:
    program = "print('GET https://maps.googleapis.com/maps/api?key=x failed'); print(1)"
    assert judge(tmp_path, ["python3", "-c", program]) is None
    why = judge(tmp_path, ["tool", "--urls=https://example.com/a,/etc/passwd"])
    assert why is not None
    assert "/etc" in why


@pytest.mark.parametrize("url", ["postgres://app:pw@db:5432/app", "redis://cache:6379/0",
                                 "mongodb+srv://u:p@cluster/db", "amqp://guest@mq//"])
def test_a_service_connection_string_is_not_a_path(tmp_path: Path, url: str) -> None:
    assert judge(tmp_path, ["tool", f"--dsn={url}"]) is None
    assert judge(tmp_path, ["python3", "-c", f"connect('{url}')"]) is None


@pytest.mark.parametrize("command", [
    "sh -c 'cat /etc/hostname'",
    ["sh", "-c", "cat /etc/hostname"],
    ["bash", "-ec", "cat</etc/hostname|head"],
    ["/bin/sh", "-o", "pipefail", "-c", "true; cat ~/.ssh/id_rsa"],
    ["env", "LC_ALL=C", "dash", "-c", "cat $(echo /proc/self/environ)"],
    ["zsh", "-c", "cat ../../../../../../etc/hostname"],
    ["python3", "-c", "print(open('/etc/hostname').read())"],
    ["python3", "-Sc", "import os; os.system('cat /etc/hostname')"],
    ["perl", "-e", "open(F, '</etc/hostname'); print <F>"],
    ["ruby", "-e", "puts File.read('/etc/hostname')"],
    ["node", "-e", "console.log(require('fs').readFileSync('/etc/hostname', 'utf8'))"],
    ["node", "--eval=require('fs').readFileSync('/etc/hostname')"],
    ["timeout", "5", "bash", "-c", "cat /tmp/elsewhere"],
    ["python3", "-c", "open(os.path.expanduser('~/.ssh/id_rsa')).read()"],
])
def test_a_shell_or_interpreter_program_naming_a_place_outside_is_blocked(
        tmp_path: Path, command: str | list[str]) -> None:
    why = judge(tmp_path, command)
    assert why is not None, command
    assert why.startswith("blocked by the command policy (workspace): ")


@pytest.mark.parametrize("command", [
    "sh -c 'echo boom; exit 3'",
    "sh -c 'echo $$ > hang.pid; sleep 300 & sleep 300; wait'",
    ["bash", "-c", "ruff check src && mypy --cache-dir=.mypy_cache src"],
    ["python3", "-c", "import sys; print('/'.join(['a', 'b']), 7 // 2, 1/2); sys.exit(0)"],
    ["python3", "-c", "open('out/report.json', 'w').write('{}')"],
    ["python3", "-c", "print(sys.argv)", "{run_dir}/x.json"],
    ["python3", "-c", "import os; open(os.environ['CKDN_RUN_DIR'] + '/env.json', 'w')"],
    ["python3", "-c", "client.get('/api/v1/users'); open('/tmp/scratch', 'w')"],
    ["node", "-e", "fetch('https://example.com/etc/x')"],
])
def test_a_shell_or_interpreter_program_inside_the_workspace_runs(
        tmp_path: Path, command: str | list[str]) -> None:
    assert judge(tmp_path, command) is None


def test_doctor_flags_a_shell_program_that_names_etc(tmp_path: Path) -> None:
    from ckdn.app.doctor import diagnose

    config = config_of(tmp_path, "sh -c 'cat /etc/hostname'")
    [checked] = diagnose(config)["checks"]  # type: ignore[arg-type]
    assert checked["verdict"] == "blocked"
    assert "'/etc/hostname'" in checked["reason"]
    assert "sh -c" in checked["reason"]


def test_a_real_run_of_sh_c_cat_etc_hostname_never_starts(project: Project) -> None:
    project.config("[check.leak]\ncommand = \"sh -c 'cat /etc/hostname; touch ran'\"\n"
                   "parser = \"generic\"\n")
    proc = project.ckdn("run", "leak")
    assert proc.returncode == 126, proc.stdout + proc.stderr
    assert not (project.root / "ran").exists()
    assert "/etc/hostname" in project.digest(proc)["notes"][0]


@pytest.mark.parametrize("command", [
    "sh -c 'ruff check . 2>/dev/null >/dev/stderr'", "mypy --cache-dir=/dev/null src",
    "head -c 10 /dev/zero"])
def test_the_stream_devices_named_exactly_are_allowed(tmp_path: Path, command: str) -> None:
    assert judge(tmp_path, command) is None


@pytest.mark.parametrize("command", ["cat /dev/null/../sda", "cat /dev/nullx", "cat /dev//fd/3",
                                     "sh -c 'cat </dev/tcp/1.2.3.4/80'"])
def test_every_other_device_stays_blocked(tmp_path: Path, command: str) -> None:
    assert judge(tmp_path, command) is not None


def test_the_policy_loads_the_inline_reader_for_every_program_it_knows() -> None:
    from ckdn.app._running.inline import INTERPRETERS, SHELLS
    from ckdn.app._running.policy import INLINE_CARRIERS

    assert SHELLS | set(INTERPRETERS) == INLINE_CARRIERS


def test_an_allowlist_policy_without_its_table_falls_back_to_the_built_in_prefixes(
        tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text('[run]\ncommand_policy = "allowlist"\n'
                                        '[check.ok]\ncommand = "true"\nparser = "generic"\n'
                                        '[check.no]\ncommand = "echo hi"\nparser = "generic"\n')
    config = load_config(str(tmp_path))
    assert config.run.allowlist == ("uv run", "uvx", "true", "false")
    assert run(config, "ok").document["status"] == "pass"
    refused = run(config, "no").document
    assert (refused["status"], refused["rc"]) == ("error", 126)
