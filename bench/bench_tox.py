"""What the tox integration costs: ``tox -e <env>`` with and without it, beside ``ckdn run``.

Prints figures; it is not a timed test. Usage::

    python bench/bench_tox.py            # 15 runs of each variant
    python bench/bench_tox.py -n 31

Every variant runs the same tool once (the env's own ``python -c pass``) in an
env created beforehand and reused, so the figures compare orchestration only:

* ``tox, no plugin``: a tox command, with the plugin disabled
  (``TOX_DISABLED_EXTERNAL_PLUGINS=ckdn``): tox as if ckdn were not installed;
* ``tox, plugin inert``: the same env with the plugin loaded but idle (the
  cost every tox run pays once ckdn is installed);
* ``tox -e check``: a zero-config env, the check run through ckdn in-process;
* ``tox ckdn_checks``: an env naming the check in ``ckdn_checks``;
* ``tox --ckdn``: observe mode on the plain env (a ``tox-<env>`` digest);
* ``ckdn run``: the ckdn CLI in the same env (its ``bin`` first on ``PATH``);
* ``tool alone``: the tool itself.

Medians of wall time and of CPU time (user + system of the whole process
tree); tox's own start-up dominates every tox figure, and on a shared machine
its noise is larger than the integration. So the script also times the
plugin's own work inside tox (in-process, around its hook functions) beside
the time tox takes to run the same tool as a command.
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
TOX = BIN / "tox"
CKDN = BIN / "ckdn"

CKDN_TOML = """\
[check.check]
command = "python -c pass"
parser = "generic"
"""

TOX_TOML = """\
[env_run_base]
skip_install = true

[env.plain]
commands = [["python", "-c", "pass"]]

[env.listed]
ckdn_checks = ["check"]
"""


#: Runs tox in-process with the plugin's entry points timed; prints the sums as JSON on stderr.
DRIVER = r"""
import json, sys, time
from tox.tox_env.api import ToxEnv
from tox_ckdn import _env, _session

spent = {}

def timed(owner, name, label):
    original = getattr(owner, name)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.perf_counter() - start
    setattr(owner, name, wrapper)

timed(_session.Session, "configure", "configure: read ckdn.toml, seed envs")
timed(_env, "before_commands", "before commands: run the checks")
timed(_env, "after_commands", "after commands: seal the observed run")
timed(_session.Session, "finish", "end of run: write the aggregate")
timed(ToxEnv, "execute", "tox runs a command (execute)")
import tox.run
try:
    tox.run.run(sys.argv[1:])
except SystemExit:
    pass
sys.stderr.write("\n" + json.dumps(spent) + "\n")
"""

HOOKED = [("tox -e plain", ["-e", "plain"]), ("tox -e check", ["-e", "check"]),
          ("tox --ckdn -e plain", ["--ckdn", "-e", "plain"])]


def hook_times(root: Path, args: list[str], env: dict[str, str]) -> dict[str, float]:
    import json

    proc = subprocess.run([sys.executable, "-c", DRIVER, *args], cwd=root, env=env,
                          capture_output=True, text=True, check=False)
    spent: dict[str, float] = json.loads(proc.stderr.strip().splitlines()[-1])
    return spent


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CKDN_", "TOX_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env["TOX_USER_CONFIG_FILE"] = os.devnull
    env.update(extra)
    return env


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, cpu) seconds of one run, the whole child tree included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=15, help="runs per variant (default 15)")
    args = parser.parse_args()
    for package in ("core/ckdn", "tox_ckdn"):
        compileall.compile_dir(ROOT / package, quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "ckdn.toml").write_text(CKDN_TOML)
        (root / "tox.toml").write_text(TOX_TOML)
        env = clean_env()
        no_plugin = clean_env(TOX_DISABLED_EXTERNAL_PLUGINS="ckdn")
        for name in ("plain", "listed", "check"):  # create the envs once; every run reuses them
            timed([str(TOX), "-e", name], root, env)
        in_env = clean_env(PATH=f"{root / '.tox' / 'check' / 'bin'}{os.pathsep}"
                                f"{os.environ['PATH']}")
        variants = [
            ("tox -e plain, no plugin", [str(TOX), "-e", "plain"], no_plugin),
            ("tox -e plain, plugin inert", [str(TOX), "-e", "plain"], env),
            ("tox -e check (zero config)", [str(TOX), "-e", "check"], env),
            ("tox -e listed (ckdn_checks)", [str(TOX), "-e", "listed"], env),
            ("tox --ckdn -e plain (observe)", [str(TOX), "--ckdn", "-e", "plain"], env),
            ("ckdn run check, same env", [str(CKDN), "run", "check"], in_env),
            ("tool alone (python -c pass)",
             [str(root / ".tox" / "check" / "bin" / "python"), "-c", "pass"], env),
        ]
        results: dict[str, list[tuple[float, float]]] = {label: [] for label, _, _ in variants}
        hooks: dict[str, dict[str, list[float]]] = {label: {} for label, _ in HOOKED}
        for _ in range(args.n):  # interleaved, so drift in machine load hits every variant alike
            for label, argv, run_env in variants:
                results[label].append(timed(argv, root, run_env))
            for label, tox_args in HOOKED:
                for part, seconds in hook_times(root, tox_args, env).items():
                    hooks[label].setdefault(part, []).append(seconds)
    print(f"python {sys.version.split()[0]}, {args.n} runs each, medians (ms)")
    print(f"{'variant':34} {'wall':>8} {'cpu':>8}")
    for label, samples in results.items():
        wall = statistics.median(s[0] for s in samples) * 1000
        cpu = statistics.median(s[1] for s in samples) * 1000
        print(f"{label:34} {wall:8.1f} {cpu:8.1f}")
    print("\ninside tox, medians (ms)")
    for label, parts in hooks.items():
        for part, spent in parts.items():
            print(f"{label:20} {part:40} {statistics.median(spent) * 1000:8.1f}")


if __name__ == "__main__":
    main()
