"""A cgroup v2 of the check's own, where ckdn may make one beside its own cgroup."""

from __future__ import annotations

import errno
import os

# Whatever session or process group a process moves to, it stays in its cgroup, and
# its children are born in it: so every process of the check found there is stopped
# (Linux 5.14+ kills all of it at once with ``cgroup.kill``), and a run that reclaims
# the lock of a dead one finds the whole of the dead run's tree in it.
#
# ckdn may make one where its own cgroup is writable: as root, or in a cgroup a
# service manager delegated to the user. Where not (most containers, most CI runners,
# an ordinary user session), there is none, and nothing but this lookup is tried.
#
# Moving a process between cgroups makes the kernel wait for an RCU grace period
# first (about 10 ms here, on a kernel without ``favordynmods``), so the tree is not
# moved at spawn time (a trivial run would pay it), but once the leader, still
# running after the first quiet look, has started a child, and only where ckdn could
# not become the tree's subreaper (``_strays.contain``). Processes that left the tree
# before then are not in it.

#: Where cgroup v2 may be mounted: a unified host, then a hybrid one.
CGROUP_MOUNTS = ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")
#: This process's cgroup v2 directory, probed on first use; False where ckdn may make no
#: cgroup beside it (tests set it False).
_cgroup_home: str | bool | None = None
#: A move refused for one of these means the next ones would be refused too.
_REFUSALS = (errno.EACCES, errno.EPERM, errno.EROFS, errno.EOPNOTSUPP, errno.EBUSY)


class Cgroup:
    """One check's cgroup, made beside ckdn's own; gone again once its tree is stopped."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path

    @classmethod
    def make(cls) -> Cgroup | None:
        global _cgroup_home  # noqa: PLW0603 - probed once per process
        if _cgroup_home is None:
            probed = _probe_home()
            if probed is not None:
                _sweep(probed)
            _cgroup_home = probed or False
        home = _cgroup_home
        if not isinstance(home, str):
            return None
        path = f"{home}/ckdn-{os.getpid()}-{os.urandom(4).hex()}"
        try:
            os.mkdir(path)
        except OSError:
            _cgroup_home = False
            return None
        return cls(path)

    def take(self, leader: int, below: list[int]) -> bool:
        """Move the leader and its descendants in; False (the cgroup removed) if the kernel
        will not move the leader."""
        try:
            _move(leader, self.path)
        except OSError as error:
            if error.errno in _REFUSALS:
                global _cgroup_home  # noqa: PLW0603
                _cgroup_home = False
            self.remove()
            return False
        for pid in below:
            try:  # noqa: SIM105
                _move(pid, self.path)
            except OSError:
                pass  # exited meanwhile, or another user's now
        return True

    def populated(self) -> bool:
        """Whether any process is left in it (or in a cgroup a nested ckdn made inside it)."""
        try:
            with open(f"{self.path}/cgroup.events", "rb") as events:
                return b"populated 0" not in events.read()
        except OSError:
            return bool(cgroup_pids(self.path))

    def kill(self) -> None:
        kill_all(self.path)

    def remove(self) -> None:
        remove(self.path)


def cgroup_pids(path: str) -> list[int]:
    """Every process in the cgroup, and in the cgroups a nested ckdn made inside it."""
    found: list[int] = []
    for folder, _, _ in os.walk(path):
        try:
            with open(f"{folder}/cgroup.procs", "rb") as procs:
                found.extend(int(pid) for pid in procs.read().split())
        except OSError:
            continue
    return found


def kill_all(path: str) -> None:
    """SIGKILL everything in it at once (Linux 5.14+; before, the caller kills each by pid)."""
    try:
        fd = os.open(f"{path}/cgroup.kill", os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.write(fd, b"1")
    except OSError:
        pass
    finally:
        os.close(fd)


def remove(path: str) -> None:
    for folder, _, _ in os.walk(path, topdown=False):
        try:  # noqa: SIM105
            os.rmdir(folder)
        except OSError:
            pass  # still populated: the lock record names it, the check's next run retries


def made_by_ckdn(path: str) -> bool:
    """A cgroup this module made (``ckdn-<pid>-<8 hex>``, in a cgroup v2 mount), nothing
    else: a lock record is a file in the runs dir, and a mistaken one must not stop a
    whole service."""
    parts = os.path.basename(path).split("-")
    return (len(parts) == 3 and parts[0] == "ckdn" and parts[1].isdigit()
            and len(parts[2]) == 8 and all(c in "0123456789abcdef" for c in parts[2])
            and any(path.startswith(f"{mount}/") for mount in CGROUP_MOUNTS)
            and ".." not in path.split("/") and os.path.isdir(path))


def _sweep(home: str) -> None:
    """Remove the empty cgroups of ckdns that died (SIGKILL) and whose check never ran
    again to reclaim them; a populated one cannot be removed, and stays for that run."""
    try:
        names = os.listdir(home)
    except OSError:
        return
    for name in names:
        path = f"{home}/{name}"
        if name.startswith("ckdn-") and made_by_ckdn(path):
            try:
                os.kill(int(name.split("-")[1]), 0)
            except ProcessLookupError:
                remove(path)
            except OSError:
                pass


def _probe_home() -> str | None:
    """This process's cgroup v2 directory, where its cgroup.procs can be seen."""
    try:
        with open("/proc/self/cgroup", "rb") as own:
            lines = own.read().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith(b"0::"):
            where = os.fsdecode(line[3:]).rstrip("/")
            for mount in CGROUP_MOUNTS:
                if os.path.exists(f"{mount}{where}/cgroup.procs"):
                    return f"{mount}{where}"
    return None


def _move(pid: int, cgroup: str) -> None:
    fd = os.open(f"{cgroup}/cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, b"%d" % pid)
    finally:
        os.close(fd)
