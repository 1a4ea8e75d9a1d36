"""The documents' shapes for hosts' type checkers, seen through the door: import them under
``TYPE_CHECKING`` only.
"""

from ckdn.documents.types import Aggregate, Digest, Document, FindingDoc, MemberDoc, Meta

__all__ = ["Aggregate", "Digest", "Document", "FindingDoc", "MemberDoc", "Meta"]
