"""The application layer: one function per user job, called by the CLI, the benchmark and the tests alike.

Each job takes plain arguments and returns a result value; a refusal is an ``EvregError`` (nothing was
written). The jobs and their modules:

- ``validation``: ``validate`` (findings of the registry or of a change), ``explain`` (a finding code).
- ``catalog``: ``ensure_catalog`` (fresh or rebuilt), ``query`` (one sandboxed read-only statement).
- ``publish``: ``build`` (catalog, downloads and site, refused on errors), ``open_server``.
- ``imports``: ``import_file`` (a tool's or lab's file into records, reporting what it introduced).
- ``records``: ``fmt``, ``write_schemas`` / ``check_schemas``, ``init``, ``new_family`` / ``new_artifact`` /
  ``new_packet``, ``feature``, and the exports.
- ``scaffold``: the records a contributor starts from (used by ``records``).
"""
