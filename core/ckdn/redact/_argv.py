"""A command line with its secret-looking values redacted, for meta.json and ``ckdn checks``.

Each token goes through the text rules (a token, a URL with a password, an
``Authorization:`` header, an env secret), and then the command-line ones:

* ``--api-token=VALUE``, ``--password VALUE``, ``DB_PASSWORD=VALUE``: an option or
  an assignment whose name says it takes a secret (:func:`ckdn.redact.secret_option`,
  :func:`ckdn.redact.secret_name`); ``--token-file PATH``, ``--password-stdin``
  and ``--no-password`` do not;
* the password options of the programs that have short ones: ``mysql -pVALUE``,
  ``sshpass -p VALUE``, ``redis-cli -a VALUE``, ``curl -u user:VALUE``,
  ``docker login -p VALUE``, ``openssl ... pass:VALUE``. ``-p`` means a password
  only there: ``pytest -p plugin`` keeps its plugin.

The program name, paths and every other token are left as they are.
"""

from __future__ import annotations

from ckdn.redact import PASSWORD_PROGRAMS, marker, secret_name, secret_option

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ckdn.redact import Redaction

__all__ = ["ARGV_RULE", "redact_argv"]

ARGV_RULE = "argv"
_MYSQL = frozenset(PASSWORD_PROGRAMS - {"sshpass", "redis-cli", "curl", "wget", "docker",
                                        "podman", "openssl"})
#: (program, short option): the next token (or the rest of this one) is a password.
_SHORT = {"sshpass": "-p", "redis-cli": "-a", "docker login": "-p", "podman login": "-p"}
_USER = ("-u", "--user", "--proxy-user")  # curl and wget: user:password


def redact_argv(argv: Sequence[str], redaction: Redaction) -> list[str]:
    out: list[str] = []
    program = ""
    pending = ""  # what the next token is: "" (itself), "value" (a secret), "user" (user:pw)
    for token in argv:
        base = token.rpartition("/")[2]
        if base in PASSWORD_PROGRAMS and not token.startswith("-"):
            program, pending = base, ""
            out.append(token)
        elif program in ("docker", "podman") and token == "login":  # noqa: S105
            program += " login"  # `docker run -p 8080:80` publishes a port
            out.append(token)
        elif pending == "value" and not token.startswith("-"):
            out.append(_hidden(redaction))
            pending = ""
        elif pending == "user":
            out.append(_user(token, redaction))
            pending = ""
        else:
            shown, pending = _token(token, program, redaction)
            out.append(shown)
    return out


def _token(token: str, program: str, redaction: Redaction) -> tuple[str, str]:
    """One token as shown, and what the next one is (see :func:`redact_argv`)."""
    head, equals, value = token.partition("=")
    named = head.lstrip("-")
    if equals and value and named.replace("-", "_").isidentifier() and (
            secret_option(head) or (head == named and secret_name(head, redaction.settings.names))):
        return f"{head}={_hidden(redaction)}", ""
    if token.startswith("--") and not equals and secret_option(token):
        return token, "value"
    short = "-p" if program in _MYSQL else _SHORT.get(program)
    if short is not None and token.startswith(short) and not token.startswith("--"):
        if token != short:
            return short + _hidden(redaction), ""
        # `mysql -p` alone prompts: the next token is a database, not a password
        return token, "" if program in _MYSQL else "value"
    if program in ("curl", "wget"):
        if token in _USER:
            return token, "user"
        if token.startswith("-u") and not token.startswith("--"):
            return "-u" + _user(token[2:], redaction), ""
        if equals and head in _USER[1:]:
            return f"{head}={_user(value, redaction)}", ""
    if program == "openssl" and token.startswith("pass:") and len(token) > 5:
        return "pass:" + _hidden(redaction), ""
    return redaction.text(token), ""


def _user(token: str, redaction: Redaction) -> str:
    user, colon, password = token.partition(":")
    return f"{user}:{_hidden(redaction)}" if colon and password else token


def _hidden(redaction: Redaction) -> str:
    redaction.counts[ARGV_RULE] = redaction.counts.get(ARGV_RULE, 0) + 1
    return marker(ARGV_RULE)
