"""The site's configuration (``mkdocs.yml``): which settings, themes, plugins and extensions a registry may use, and
the figures it shows on every page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from evreg.claims import figures
from evreg.core import codes
from evreg.core.containment import SITE_DIR, outside_repository, unsafe_files
from evreg.core.findings import join_pointer

if TYPE_CHECKING:
    from pathlib import Path

    from evreg.core.findings import Finding

SITE_CONFIG = "mkdocs.yml"
_CONFIG_KEYS = frozenset(
    {
        "site_name", "site_description", "site_author", "site_url", "copyright", "repo_url", "repo_name", "edit_uri",
        "docs_dir", "site_dir", "use_directory_urls", "theme", "plugins", "markdown_extensions", "extra_css", "nav",
        "not_in_nav", "exclude_docs", "validation", "strict", "dev_addr", "watch",
    }
)  # fmt: skip
_THEME_KEYS = frozenset({"name", "font", "features", "palette", "language", "icon", "logo", "favicon"})
_PLUGINS = frozenset({"search"})
_EXTENSIONS = frozenset(
    {"tables", "attr_list", "md_in_html", "admonition", "toc", "footnotes", "def_list", "abbr", "sane_lists"}
)


def _names(value: Any) -> list[str]:
    """Names in a MkDocs list of plugins or extensions (``- name`` or ``- name: {options}``)."""
    items = value if isinstance(value, list) else [value] if value is not None else []
    return [str(k) for item in items for k in (item if isinstance(item, dict) else [item])]


def unsafe_config(root: Path) -> list[str]:
    """Why the site configuration (``mkdocs.yml``) could run code, read files or load scripts
    during a build or in a reader's browser; empty when it cannot. MkDocs reads its configuration
    with PyYAML's full loader (``!!python/object/apply`` runs code, ``!ENV`` publishes the build
    machine's environment) and runs ``hooks``, plugins and Markdown extensions named there, so a
    pull request's configuration is held to plain YAML and an allowlist."""
    import yaml

    try:
        config = yaml.safe_load((root / SITE_CONFIG).read_bytes())
    except OSError:
        return [f"{SITE_CONFIG} cannot be read"]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        return [f"it is not plain YAML{where}: tags such as !ENV or !!python are not allowed"]
    if not isinstance(config, dict):
        return ["it is not a mapping of settings"]
    out = [
        f"setting {k!r} is not allowed (it can run code or load outside content)"
        for k in config
        if k not in _CONFIG_KEYS
    ]
    if config.get("docs_dir", SITE_DIR) != SITE_DIR:
        out.append(f"docs_dir must be {SITE_DIR}")
    theme = config.get("theme")
    if isinstance(theme, dict):
        out += [f"theme setting {k!r} is not allowed" for k in theme if k not in _THEME_KEYS]
    if (theme.get("name") if isinstance(theme, dict) else theme) not in (None, "material"):
        out.append("the theme must be material")
    out += [f"plugin {n!r} is not allowed" for n in _names(config.get("plugins")) if n not in _PLUGINS]
    out += [
        f"Markdown extension {n!r} is not allowed"
        for n in _names(config.get("markdown_extensions"))
        if n not in _EXTENSIONS
    ]
    for css in config.get("extra_css") or []:
        why = outside_repository(str(css)) or (None if not re.match(r"^[a-z]+:", str(css)) else "it is a URL")
        if why:
            out.append(f"extra_css {css!r}: {why}")
    return out


def unpublishable(root: Path) -> list[Finding]:
    """What a build must refuse: files under site/ it must not publish (``site-file-unsafe``) and a
    configuration it must not load (``site-config-unsafe``). The rules report the same findings."""
    out = [
        codes.SITE_FILE_UNSAFE.at(rel, "", f"{rel} cannot be published: {why}")
        for rel, why in unsafe_files(root, SITE_DIR)
    ]
    if (root / SITE_CONFIG).exists():
        out += [codes.SITE_CONFIG_UNSAFE.at(SITE_CONFIG, "", why) for why in unsafe_config(root)]
        out += config_figures(root)
    return out


_SHOWN_SETTINGS = ("site_name", "site_description", "site_author", "copyright", "repo_name")
"""Settings of ``mkdocs.yml`` shown on every page (with the titles of ``nav``; ``repo_name`` in the header)."""


def config_figures(root: Path) -> list[Finding]:
    """Figures in what ``mkdocs.yml`` shows on every page, around every page's content: the site's name, description,
    author, copyright and the titles of its navigation. No citation can be written there: each is an orphan."""
    config = _config(root)
    if config is None:
        return []
    shown = [(f"/{k}", config[k]) for k in _SHOWN_SETTINGS if isinstance(config.get(k), str)]
    shown += list(_nav_titles(config.get("nav"), "/nav"))
    return [
        codes.ORPHAN_NUMBER.at(
            SITE_CONFIG,
            pointer,
            f"figure {fig.text!r} in {pointer} of {SITE_CONFIG}, shown on every page, is no citation",
        )
        for pointer, text in shown
        for fig in figures.find_figures(text)
    ]


def _nav_titles(nav: Any, pointer: str) -> Iterator[tuple[str, str]]:
    """(JSON pointer, title) of every title in a MkDocs ``nav`` (a list of pages, titled pages and sections)."""
    for i, item in enumerate(nav if isinstance(nav, list) else []):
        for title, value in item.items() if isinstance(item, dict) else []:
            at = pointer + join_pointer(i, str(title))
            yield at, str(title)
            yield from _nav_titles(value, at)


def _config(root: Path) -> dict[str, Any] | None:
    """``mkdocs.yml`` read as plain YAML, or None when it cannot be read as a mapping (``unsafe_config`` says why)."""
    import yaml

    try:
        config = yaml.safe_load((root / SITE_CONFIG).read_bytes())
    except (OSError, yaml.YAMLError):
        return None
    return config if isinstance(config, dict) else None


def site_extensions(root: Path) -> list[Any]:
    """The Markdown extensions ``mkdocs.yml`` names, as MkDocs loads them for every page; none when the configuration
    is refused (``unsafe_config``)."""
    config = _config(root)
    if config is None or unsafe_config(root):
        return []
    value = config.get("markdown_extensions")
    return value if isinstance(value, list) else []
