"""Evidence registry for LLM inference results.

The ``registry`` package holds the record models, the git-native store, the
lab-format importers and exporters, the catalog and the CLI. Validation rules
live in the separate ``validators`` package and are discovered through the
``evreg.rules`` entry point, so this package never imports them by name.
"""

__version__ = "0.1.0"
