"""The one output policy every verb writes through (layer 1: ``errors``, ``lang`` and the
standard library only).

- ``policy``: ``OutputPolicy``, built once per command from every path it reads and
  ``overwrite``: it refuses an output that is, lies inside, or holds an input, and a
  finished result made with other settings (``check_settings``, the settings stamp
  ``settings_record``); its writers check each file first.
- ``files``: ``atomic_file`` (never half written, no temporary file left),
  ``AppendFile`` (checkpoints that grow one whole line at a time), ``whole_lines``
  (read back without a torn last line), ``make_folder``; every ``OSError`` becomes
  an ``OutputError`` naming the file (exit 2).
- ``checkpoint``: ``RowCheckpoint``, JSON rows kept line by line under a key, which
  ``generate`` and ``simulate`` resume from.
- ``text``: the one rule for text UTF-8 cannot encode (a lone surrogate):
  ``dumps_strict`` escapes it, text files write ``\\udXXX``, ``hash_bytes`` hashes it.

The rules, for every verb: docs/failure-behaviour.md, "Outputs of every verb".
"""

from localeval.output.checkpoint import RowCheckpoint
from localeval.output.files import (
    AppendFile,
    atomic_file,
    cannot_write,
    make_folder,
    move_into_place,
    whole_lines,
    write_json,
    write_text,
)
from localeval.output.policy import (
    SETTINGS_KEY,
    OutputPolicy,
    html_settings_comment,
    settings_record,
)
from localeval.output.text import TEXT_ERRORS, dumps_strict, escape_surrogates, hash_bytes

__all__ = ["AppendFile", "OutputPolicy", "RowCheckpoint", "SETTINGS_KEY", "TEXT_ERRORS", "atomic_file",
           "cannot_write", "dumps_strict", "escape_surrogates", "hash_bytes",
           "html_settings_comment", "make_folder", "move_into_place", "settings_record", "whole_lines",
           "write_json", "write_text"]
