"""Evidence registry for LLM inference results.

The ``evreg`` package (in ``registry/``) holds the record models, the git-native
store, the importers and exporters, the catalog, the site and the CLI. Validation
rules live in the rule pack ``evreg_rules`` (in ``validators/``) and are discovered
through the ``evreg.rules`` entry point, so this package never imports them by name.
"""

from evreg.core import VERSION

__version__ = VERSION
