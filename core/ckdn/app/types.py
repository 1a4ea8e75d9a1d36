"""The documents' shapes for hosts' type checkers: import under ``TYPE_CHECKING`` only.

Hosts annotate what :mod:`ckdn.app` hands them (``Outcome.document``, a stored
run) with these; they are :mod:`ckdn.documents.types`, seen through the door.
"""

from ckdn.documents.types import Aggregate, Digest, Document, FindingDoc, MemberDoc, Meta

__all__ = ["Aggregate", "Digest", "Document", "FindingDoc", "MemberDoc", "Meta"]
