"""The programs a command carries inline: ``sh -c 'cat /etc/hostname'``, ``python -c``."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["INTERPRETERS", "SHELLS", "inline_programs", "program_words"]

# The command policy reads a check's argv for paths, and a shell's ``-c`` program or an
# interpreter's inline program (``python -c``, ``perl -e``, ``ruby -e``, ``node -e``) is
# one argument that holds a whole command line: a shell's words are read as the argv's
# are; an interpreter's words only for the places no check may name (its strings are
# as often URL paths and fragments as files: ``'/api/v1'``, ``dir + '/x.json'``)
# (:func:`inline_programs`, :func:`program_words`). Loaded only for an argv that names
# a shell or an interpreter (``INLINE_CARRIERS`` of the policy).

#: Shells whose ``-c`` (alone or in a cluster: ``-ec``, ``-lc``) takes a command line.
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "fish",
                    "csh", "tcsh", "busybox"})
#: Interpreters and the options that take an inline program.
INTERPRETERS = {"python": ("-c",), "pypy": ("-c",), "perl": ("-e", "-E"), "ruby": ("-e",),
                "node": ("-e", "--eval", "-p", "--print"), "nodejs": ("-e", "--eval", "-p"),
                "php": ("-r",), "lua": ("-e",), "Rscript": ("-e",), "tclsh": ("-c",)}
#: What ends a path written in a program's text: blanks, quotes, the shells'
#: operators and redirections, brackets, a backslash escape.
_BREAKS = frozenset(" \t\r\n\v\f'\"`;|&<>()[]{}$\\,*?!#%^+")


def interpreter_of(program: str) -> str | None:
    """The family name of ``program`` (a path or a name: ``/usr/bin/python3.12`` is
    ``python``), when it is a shell or an interpreter ckdn reads inline programs of."""
    name = program.rpartition("/")[2]
    if name in SHELLS:
        return name
    stem = name.rstrip("0123456789.")
    if stem.endswith("-config"):
        return None
    return stem if stem in INTERPRETERS else None


def inline_programs(argv: Sequence[str]) -> list[tuple[str, str, bool]]:
    """``(how it was given, program text, whether a shell runs it)`` for every inline
    program in ``argv``, at any position (``env sh -c``, ``uv run python -c``)."""
    found: list[tuple[str, str, bool]] = []
    for index, word in enumerate(argv):
        family = interpreter_of(word)
        if family is None:
            continue
        rest = argv[index + 1:]
        if family in SHELLS:
            found.extend((given, text, True) for given, text in _shell_program(family, rest))
        else:
            found.extend((given, text, False) for given, text in
                         _interpreter_program(family, INTERPRETERS[family], rest))
    return found


def _shell_program(name: str, rest: Sequence[str]) -> list[tuple[str, str]]:
    """A shell's ``-c`` program: the first operand after a short-option cluster holding
    ``c`` (``-c``, ``-ec``, ``-o pipefail -c``); read strictly: any such cluster counts."""
    for index, word in enumerate(rest):
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
            operands = [w for w in rest[index + 1:] if not w.startswith("-")]
            return [(f"{name} {word}", operands[0])] if operands else []
    return []


def _interpreter_program(name: str, options: Sequence[str], rest: Sequence[str]
                         ) -> list[tuple[str, str]]:
    """An interpreter's inline programs: the value of each of ``options``, glued
    (``-cprint(1)``, ``--eval=...``), in a cluster (``python -Sc``) or the next argument;
    read strictly: wherever it comes (a value this takes for a program is checked too)."""
    found: list[tuple[str, str]] = []
    for index, word in enumerate(rest):
        following = rest[index + 1] if index + 1 < len(rest) else None
        for option in options:
            long = option.startswith("--")
            if word == option or (not long and len(word) > 2 and word[1:-1].isalpha()
                                  and word.startswith("-") and not word.startswith("--")
                                  and word.endswith(option[1])):
                if following is not None:
                    found.append((f"{name} {word}", following))
            elif long and word.startswith(option + "="):
                found.append((f"{name} {option}", word[len(option) + 1:]))
            elif not long and word.startswith(option) and len(word) > 2:
                found.append((f"{name} {option}", word[2:]))
    return found


def program_words(text: str) -> list[str]:
    """The words of a program's text that may name a path: split at blanks, quotes and
    operators (``cat</etc/x``, ``open('/etc/x')``); a word with no letter or digit (``/``
    of ``'/'.join``, ``//`` integer division) names nothing to check."""
    words: list[str] = []
    start = 0
    for index, char in enumerate(text):
        if char in _BREAKS:
            if index > start:
                words.append(text[start:index])
            start = index + 1
    if start < len(text):
        words.append(text[start:])
    return [word for word in words if any(char.isalnum() for char in word)]
