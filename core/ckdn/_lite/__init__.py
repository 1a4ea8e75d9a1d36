"""Start-up stand-ins: small pieces that do one stdlib module's job on ``ckdn run``'s path."""

# ``ckdn run`` on a trivial check must cost little more than starting Python, and
# a few stdlib modules cost more to import than the whole run's work. Each
# stand-in here obeys one rule:
#
# 1. it names the stdlib piece it stands in for, and does exactly that piece's
#    job for the inputs it accepts;
# 2. a differential test holds it to that piece on generated input
#    (tests/core/lite/);
# 3. it has a fallback: what it does not handle it hands to the stdlib piece, so
#    the answer (or the error) is always the stdlib's.
#
# =================  ==========================  =======================================
# stand-in           stands in for               falls back to it for
# =================  ==========================  =======================================
# ``record``         ``dataclasses.dataclass``   ``fields``/``replace``/``asdict``
# ``toml``           ``tomllib.loads``           anything beyond plain TOML
# ``canonical``      ``json.dumps`` (canonical)  (the escaper, where ``_json`` is absent)
# ``argv``           ``shlex.split``             a quoted or escaped command
# ``spawn``          ``subprocess.Popen``        another cwd, no ``/proc``, a closed fd
# ``rmtree``         ``shutil.rmtree``           no descriptor-relative removal
# =================  ==========================  =======================================
#
# Nothing here knows a check, a parser or a document; every room may use them.
