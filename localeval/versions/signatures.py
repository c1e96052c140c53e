"""Were both versions scored the same way? The two runs' signatures, compared in words.

A difference between two runs is the pipeline's only when the same judge,
prompts, embedder, verdict mode and reason mode scored both; otherwise part of
it may be the judge's. Only what the compared metrics use is compared: the
judge, its prompts, verdict and reason modes and repeats matter to judged
metrics only, the embedder to embedding metrics only (a diff of BLEU and ROUGE
says nothing of judges). The test set is compared as well, when both runs
record it (earlier runs do not).

What is compared, and the sentences, are the run's identity's
(``results.Identity``: the one definition of what makes two runs the same run,
shared with the folder rule, ``history``'s marks and the report's signature
line); older signatures are brought to today's keys by the results layer
(``results.current_summary``) before they get here. These functions take the
signatures as mappings (``ResultSet.signature``, a history entry's); exports
from other tools carry none, which is said too.
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["signature_notes", "signature_text", "same_setup_text"]


def same_setup_text(judged: bool = True, embedded: bool = True) -> str:
    """The sentence for two runs scored the same way, naming only what the metrics use."""
    from localeval.results import same_setup_text as text

    return text(judged, embedded)


def signature_text(sig: Mapping[str, Any]) -> str:
    """The run's signature line (``results.Identity.line``); "" when there is none."""
    from localeval.results import Identity

    ident = Identity.of_signature(sig)
    return ident.line() if ident.recorded else ""


def signature_notes(base: Mapping[str, Any], new: Mapping[str, Any], base_name: str = "base",
                    new_name: str = "new", *, judged: bool = True, embedded: bool = True
                    ) -> tuple[list[str], bool]:
    """(plain sentences, same): what differs between the two runs' scoring set-ups
    (``results.Identity.setup_notes``).

    ``judged`` / ``embedded``: whether a compared metric uses a judge / an
    embedder; a part no compared metric uses is not compared. ``same`` is
    False when a compared part differs or a side records no signature (then
    the reader cannot tell, and the page says so).
    """
    from localeval.results import Identity

    return Identity.of_signature(base).setup_notes(
        Identity.of_signature(new), base_name, new_name, judged=judged, embedded=embedded)
