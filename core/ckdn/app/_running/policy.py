"""The command policy and the child's environment: whether a check's argv may start, decided
once for ``ckdn run``, every host and ``ckdn doctor`` (the rules: docs/security.md).
"""

from __future__ import annotations

import os
import sys
import time

from ckdn._lite import split_command
from ckdn.evidence_files import NotRegular, read_regular
from ckdn.process import RC_NOT_EXECUTABLE, Exit, FinishedRun

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from ckdn.config import Check, Config

__all__ = ["FORBIDDEN_HOME", "FORBIDDEN_ROOTS", "LOADER_VARS", "LOCK_REQUIRED", "blocked_run",
           "child_env", "locked", "verdict"]

FORBIDDEN_ROOTS = ("/etc", "/proc", "/sys", "/dev")
FORBIDDEN_HOME = (".ssh", ".aws", ".gnupg", ".netrc", ".docker", ".kube")
#: The programs (a name less its version: ``python3.12`` is ``python``) whose inline
#: programs are read (:mod:`ckdn.app._running.inline` knows how; a test holds the two equal).
INLINE_CARRIERS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh",
                             "fish", "csh", "tcsh", "busybox", "python", "pypy", "perl", "ruby",
                             "node", "nodejs", "php", "lua", "Rscript", "tclsh"})
#: Devices that hold nothing to leak, named exactly so (``2>/dev/null`` in a shell's program).
STREAM_DEVICES = frozenset({"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr"})
LOADER_VARS = ("LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES")
#: Schemes whose URLs name another machine: not a path here. Any other ``x://``
#: (``xml://etc``) is read as text that may hold a path; ``file:`` names one.
_NETWORK_SCHEMES = frozenset({
    "http", "https", "ftp", "ftps", "sftp", "ssh", "rsync", "git", "svn", "s3", "gs", "ws",
    "wss", "git+https", "git+ssh", "git+http", "hg+https", "grpc", "grpcs", "tcp", "udp",
    # services a test talks to (connection strings in a program's text or an option)
    "postgres", "postgresql", "mysql", "mariadb", "redis", "rediss", "amqp", "amqps",
    "mongodb", "mongodb+srv", "ldap", "ldaps", "smtp", "smtps", "imap", "imaps", "kafka",
    "nats", "mqtt", "memcached", "clickhouse", "cockroachdb", "mssql", "oracle"})
#: ``sha256`` of the empty log a blocked run leaves (no hashlib on the run path).
_EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def verdict(config: Config, check: Check, argv: Sequence[str], run_dir: str,
            env: Mapping[str, str]) -> str | None:
    """Why the policy refuses ``argv`` (``{run_dir}`` substituted), or None to let it run.

    ``env`` is the child's environment (its ``PATH`` and ``HOME`` are the ones that
    count); ``run_dir`` the run's own dir (doctor passes the one a run would get).
    """
    settings = config.run
    policy = settings.command_policy
    if policy == "off":
        return None
    head = f"blocked by the command policy ({policy}): "
    for name in LOADER_VARS:
        if name in check.env:
            return head + f"env sets {name}, which loads code into every program the check runs"
    if policy == "allowlist" and not _allowed_prefix(settings.allowlist, argv, run_dir):
        shown = " ".join(argv[:3]) + (" ..." if len(argv) > 3 else "")
        return head + (f"the command {shown!r} starts with none of [run.command_allowlist]"
                       f" prefixes")
    rules = _Rules(config.cwd, run_dir, env)
    why = rules.executable(argv[0])
    if why is not None:
        return head + why
    for token in argv[1:]:
        why = rules.argument(token)
        if why is not None:
            return head + why
    if any(word.rpartition("/")[2].rstrip("0123456789.") in INLINE_CARRIERS for word in argv):
        # lazy on purpose: kept off `ckdn run`'s startup unless an argv names a shell or such
        from ckdn.app._running.inline import inline_programs, program_words

        for given, program, shell in inline_programs(argv):
            for word in program_words(_without_urls(program)):
                why = rules.argument(word, confine=shell)
                if why is not None:
                    return head + why + f", in the program of {given!r}"
    return None


def blocked_run(log_path: str, note: str, *, private: bool = True) -> FinishedRun:
    """The run of a blocked command: an empty ``full.log``, rc 126, never started."""
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC,
                 0o600 if private else 0o666)
    os.close(fd)
    now = time.time()
    return FinishedRun(Exit(RC_NOT_EXECUTABLE, started=False, notes=(note,)), _EMPTY_SHA256, 0,
                       now, now)


def _allowed_prefix(prefixes: Sequence[str], argv: Sequence[str], run_dir: str) -> bool:
    for prefix in prefixes:
        words = [w.replace("{run_dir}", run_dir) for w in split_command(prefix)]
        if len(words) > len(argv) or not words:
            continue
        first = argv[0] if "/" in words[0] else os.path.basename(argv[0])
        if first == words[0] and list(argv[1:len(words)]) == words[1:]:
            return True
    return False


#: The forbidden places for a set of home directories: (as shown, as a path), each also
#: as its real path where that differs (``/etc`` is ``/private/etc`` on macOS). Made
#: once per process and set of homes (an alias asks for every member).
_FORBIDDEN: dict[tuple[str, ...], tuple[tuple[str, str], ...]] = {}


def _forbidden(homes: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    found = _FORBIDDEN.get(homes)
    if found is None:
        places = [*FORBIDDEN_ROOTS, *(f"{h.rstrip('/')}/{d}" for h in homes
                                      for d in FORBIDDEN_HOME)]
        pairs = [(p, p) for p in places]
        pairs.extend((p, real) for p in places
                     for real in (_plain(os.path.realpath(p)),) if real != p)
        found = _FORBIDDEN[homes] = tuple(pairs)
    return found


def _plain(path: str) -> str:
    """Normalised, with POSIX's two leading slashes (``//etc``) made one."""
    path = os.path.normpath(path)
    return "/" + path.lstrip("/") if path.startswith("//") else path


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


class _Rules:
    """The places one check may name: its cwd and run dir, and never the forbidden ones."""

    def __init__(self, cwd: str, run_dir: str, env: Mapping[str, str]) -> None:
        self.cwd = _plain(cwd)
        self.run_dir = _plain(run_dir)
        self.env = env
        self._roots: tuple[tuple[str, str], ...] | None = None
        self._forbidden: tuple[tuple[str, str], ...] | None = None

    @property
    def roots(self) -> tuple[tuple[str, str], ...]:
        """(cwd, its real path) and (run dir, its real path): made when a path needs them."""
        if self._roots is None:
            self._roots = tuple((root, _plain(os.path.realpath(root)))
                                for root in (self.cwd, self.run_dir))
        return self._roots

    @property
    def real_roots(self) -> tuple[str, ...]:
        return tuple(real for _, real in self.roots)

    def forbidden_place(self, path: str) -> str | None:
        if self._forbidden is None:
            homes = {h for h in (os.environ.get("HOME"), self.env.get("HOME")) if h}
            homes.add(os.path.expanduser("~"))
            self._forbidden = _forbidden(tuple(sorted(_plain(h) for h in homes)))
        for place, real in self._forbidden:
            if _under(path, real):
                return place
        return None

    def resolve(self, lexical: str) -> str:
        """``os.path.realpath(lexical)``, cheaply for a path under a root: only what lies
        below the root is looked at (one ``lstat`` per part, until one does not exist)."""
        for root, real in self.roots:
            if not _under(lexical, root):
                continue
            rest = lexical[len(root):].strip("/")
            path = root
            for part in rest.split("/") if rest else ():
                path = f"{path.rstrip('/')}/{part}"
                try:
                    mode = os.lstat(path).st_mode
                except OSError:
                    break  # nothing more exists: no link further down
                if mode & 0o170000 == 0o120000:  # a symlink: resolve it all
                    return _plain(os.path.realpath(lexical))
            return real if not rest else f"{real.rstrip('/')}/{rest}"
        return _plain(os.path.realpath(lexical))

    def executable(self, program: str) -> str | None:
        if "/" not in program:
            return None  # looked up on the check's PATH, as the runner will
        lexical = _plain(os.path.join(self.cwd, program))
        real = self.resolve(lexical)
        for path in (lexical, real):
            place = self.forbidden_place(path)
            if place is not None:
                return f"the program {program!r} is under {place}, which no check may run from"
        if _under(lexical, self.cwd):
            return None
        folder = os.path.dirname(lexical)
        trusted = {_plain(os.path.join(self.cwd, d)) for d in
                   self.env.get("PATH", os.defpath).split(os.pathsep) if d}
        trusted.add(_plain(os.path.dirname(os.path.abspath(sys.executable or "/nonexistent"))))
        if folder in trusted or os.path.dirname(real) in trusted:
            return None
        real_trusted = {_plain(os.path.realpath(d)) for d in trusted}
        if _plain(os.path.realpath(folder)) in real_trusted:
            return None
        return (f"the program {program!r} is outside the working directory and in no directory"
                f" on the check's PATH")

    def argument(self, token: str, *, confine: bool = True) -> str | None:
        """Why ``token`` may not be named; ``confine=False``: only the forbidden places
        count (a word of an interpreter's program), not the rest outside the cwd."""
        for value, what in _values(token):
            why = self.path(value, what, token, confine)
            if why is not None:
                return why
        return None

    def path(self, value: str, what: str, token: str, confine: bool = True) -> str | None:
        if not value:
            return None
        if value.startswith("file:"):  # a file URL names a path
            value = "/" + value[5:].lstrip("/")
        elif _network_url(value):
            return None  # not a path on this machine
        if value in STREAM_DEVICES:
            return None  # named as such (a link to /proc/self/fd is what the tool has anyway)
        candidates = [value]
        if value.startswith("~"):
            candidates.append(os.path.expanduser(value))  # many tools expand it themselves
        for candidate in candidates:
            lexical = _plain(os.path.join(self.cwd, candidate))
            pathlike = "/" in candidate or candidate.startswith(("~", ".."))
            if not pathlike and not os.path.lexists(lexical):
                continue  # a word, not a path in the cwd
            real = self.resolve(lexical)
            shown = f"{what} {value!r}" + (f" of {token!r}" if value != token else "")
            for path in (lexical, real):
                place = self.forbidden_place(path)
                if place is not None:
                    return f"{shown} is under {place}, which no check may name"
            if confine and not any(_under(real, root) for root in self.real_roots):
                link = "" if real == lexical else f" (through a link, to {real})"
                return (f"{shown} resolves outside the working directory and the run"
                        f" dir{link}")
        return None


def _network_url(text: str) -> bool:
    scheme, sep, _ = text.partition("://")
    return bool(sep) and scheme.lower() in _NETWORK_SCHEMES


#: What ends a URL inside a longer text (a program given with ``-c``, a quoted list).
_URL_END = frozenset(" \t\r\n'\"`<>()[]{},;")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")


def _without_urls(text: str) -> str:
    """``text`` with every network URL inside it blanked (a ``-c`` program that prints
    ``https://host/path`` names no path here; its ``//host/path`` once split at ``:`` would
    look like one). String methods only: ``re`` is not loaded on ``ckdn run``'s path."""
    at = text.find("://")
    if at < 0:
        return text
    out: list[str] = []
    done = 0
    while at >= 0:
        start = at
        while start > done and text[start - 1] in _SCHEME_CHARS:
            start -= 1
        end = at + 3
        if text[start:at].lower() in _NETWORK_SCHEMES:
            while end < len(text) and text[end] not in _URL_END:
                end += 1
            out.append(text[done:start])
            out.append(" ")
            done = end
        at = text.find("://", end)
    out.append(text[done:])
    return "".join(out)


def _values(token: str) -> list[tuple[str, str]]:
    """Every string in ``token`` that may name a path, and what it is, for the note."""
    found = [(token, "argument")]
    if token.startswith("@") and len(token) > 1:  # a response file: gcc, javac, pip's -r kin
        found.append((token[1:], "response file"))
    value = None
    if token.startswith("--") and "=" in token:
        value = token.split("=", 1)[1]
        found.append((value, "option value"))
    elif token.startswith("-") and len(token) > 2 and token[1] != "-":
        value = token[2:]  # -I/etc, -o=x
        found.append((value, "option value"))
        if value.startswith("="):
            found.append((value[1:], "option value"))
    for text in (token, value):
        if text is None or _network_url(text):
            continue
        pieces = [_without_urls(text)]
        for sep in ",;=":
            pieces = [p for piece in pieces for p in piece.split(sep)]
        pieces = [p for piece in pieces if not _network_url(piece) for p in piece.split(":")]
        found.extend((p, "part") for p in pieces if p and p != text)
    return found


#: What a minimal environment keeps of ckdn's own (``[run].inherit_env = false``, ``env_allow``).
MINIMAL_ENV = ("PATH", "HOME", "LANG", "TERM", "SYSTEMROOT")


def child_env(config: Config, check: Check, name: str, run_dir: str,
              base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The child's environment: ours (or, with ``[run].inherit_env = false`` or the check's
    ``env_allow``, only :data:`MINIMAL_ENV` and the allowed names), ``PYTHONUNBUFFERED=1``,
    the check's ``env`` (with ``{run_dir}``), the ckdn markers.

    A Python tool writing to a file buffers its output, and a tool stopped at its timeout
    or by Ctrl-C took the buffer with it: the log said nothing of where it hung. The
    check's ``env`` may still say otherwise (``PYTHONUNBUFFERED = ""`` buffers again).
    """
    source = os.environ if base is None else base
    if config.run.inherit_env and check.env_allow is None:
        env = dict(source)
    else:
        allow = check.env_allow or ()
        names = [n for n in allow if not n.endswith("*")]
        prefixes = tuple(n[:-1] for n in allow if n.endswith("*"))
        env = {key: value for key, value in source.items()
               if key in MINIMAL_ENV or key in names or (prefixes and key.startswith(prefixes))}
    env["PYTHONUNBUFFERED"] = "1"
    env.update({key: value.replace("{run_dir}", run_dir) for key, value in check.env.items()})
    env["CKDN_RUN_DIR"] = run_dir
    env["CKDN_CHECK"] = name
    return env


#: The line a lock file written from a config with ``require_lock = true`` holds (the
#: SHA-256 of ``true``; :mod:`ckdn.app._project.lock` writes it, a test holds the two together).
LOCK_REQUIRED = (b'require_lock = "sha256:'
                 b'b5bea41b6c623f7c09f1bf24dcae58ebab3c0cdd90ad966bc43a45b44867e12b"')


def locked(config: Config, names: Iterable[str]) -> None:
    """Refuse checks changed since ``ckdn.lock.toml`` when a lock is required, by the config
    or by the lock (:mod:`ckdn.app._project.lock`). Without a lock file this is one ``stat``; beside
    one that requires nothing, one small read: the lock module loads only when it must judge."""
    folder = os.path.dirname(config.path) if config.path is not None else config.cwd
    required = config.run.require_lock
    if not required:
        try:
            required = LOCK_REQUIRED in read_regular(os.path.join(folder, "ckdn.lock.toml"),
                                                     1 << 20, follow=True)
        except NotRegular:  # a FIFO would block, a device never end: judged, and refused
            required = True
        except OSError:  # no lock file (or none readable: verify-config says why)
            return
    if required:
        from ckdn.app._project.lock import enforce  # lazy: hashlib and json, only to judge

        enforce(config, names)
