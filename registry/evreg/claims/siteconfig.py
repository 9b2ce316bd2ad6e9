"""The site's configuration (``mkdocs.yml``): which settings, themes, plugins and extensions a registry may use, and
the figures it shows on every page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evreg.claims import figures, sanitize
from evreg.core import codes
from evreg.core.containment import SITE_DIR, outside_repository, unsafe_files
from evreg.core.findings import join_pointer
from evreg.core.printing import CONTROL

if TYPE_CHECKING:
    from evreg.core.findings import Finding

SITE_CONFIG = "mkdocs.yml"
_CONFIG_KEYS = frozenset(
    {
        "site_name", "site_description", "site_author", "site_url", "copyright", "repo_url", "repo_name", "edit_uri",
        "docs_dir", "site_dir", "use_directory_urls", "theme", "plugins", "markdown_extensions", "extra_css", "nav",
        "not_in_nav", "exclude_docs", "validation", "dev_addr", "watch",
    }
)  # fmt: skip
_THEME_KEYS = frozenset({"name", "font", "features", "palette", "language", "icon", "logo", "favicon"})
_PLUGINS = frozenset({"search"})
_EXTENSIONS = frozenset(
    {"tables", "attr_list", "md_in_html", "admonition", "toc", "footnotes", "def_list", "abbr", "sane_lists"}
)


_FEATURES = frozenset(
    {
        "announce.dismiss", "content.action.edit", "content.action.view", "content.code.annotate",
        "content.code.copy", "content.code.select", "content.footnote.tooltips", "content.tabs.link",
        "content.tooltips", "header.autohide", "navigation.expand", "navigation.footer", "navigation.indexes",
        "navigation.instant", "navigation.instant.prefetch", "navigation.instant.preview",
        "navigation.instant.progress", "navigation.path", "navigation.prune", "navigation.sections",
        "navigation.tabs", "navigation.tabs.sticky", "navigation.top", "navigation.tracking", "search.highlight",
        "search.share", "search.suggest", "toc.follow", "toc.integrate",
    }
)  # fmt: skip
"""The theme's features (Material for MkDocs' ``theme.features``)."""
_COLORS = frozenset(
    {
        "red", "pink", "purple", "deep purple", "indigo", "blue", "light blue", "cyan", "teal", "green", "light green",
        "lime", "yellow", "amber", "orange", "deep orange", "brown", "grey", "blue grey", "black", "white", "custom",
    }
)  # fmt: skip
"""The theme's colour names (``theme.palette`` ``primary`` and ``accent``)."""
_PALETTE_KEYS = frozenset({"scheme", "primary", "accent", "toggle", "media"})
_SEARCH_OPTIONS = frozenset({"enabled", "lang", "separator", "pipeline"})
"""Options of the search plugin; the others read files (``jieba_dict``) or are gone from the plugin."""
_SHOWN_SETTINGS = ("site_name", "site_description", "site_author", "copyright", "repo_name")
"""Settings of ``mkdocs.yml`` shown on every page (with the titles of ``nav``; ``repo_name`` in the header). The
theme prints them into the page's HTML as they are, unescaped."""
_URL_SETTINGS = ("site_url", "edit_uri")
"""Settings of ``mkdocs.yml`` that become links or addresses on every page."""
NOT_PLAIN = re.compile(r"[<>&\"'`\\]|[\x00-\x20\x7f-\x9f\u2028\u2029]")
"""What plain text printed into HTML may not hold: markup, an entity a browser would decode, a quote that ends an
attribute (and, in a URL, a blank or a control character, which browsers drop or decode)."""


def url_problem(url: str, schemes: frozenset[str] = frozenset({"https"})) -> str | None:
    """Why ``url`` is no address the configuration may give: not plain (``NOT_PLAIN``: the theme prints it into
    HTML as it is), or not one ``sanitize.url_problem`` lets a page carry with ``schemes`` (none: the site's own)."""
    if NOT_PLAIN.search(url):
        return "it holds markup, an entity, a quote, a blank or a control character"
    return sanitize.url_problem(url, schemes)


def text_problem(text: str) -> str | None:
    """Why ``text`` is not plain text the theme may print unescaped into every page, or None."""
    if re.search(r"[<>&\"'`]", text) or CONTROL.search(text):
        return "it holds markup, an entity, a quote or a control character (it is printed into every page as HTML)"
    return None


def _theme_languages() -> frozenset[str]:
    """The languages the installed theme has (its ``partials/languages`` templates)."""
    import material

    folder = Path(material.__file__).parent / "templates" / "partials" / "languages"
    return frozenset(p.stem for p in folder.glob("*.html"))


def _theme_icons() -> Path:
    """The folder of the installed theme's icons (``.icons/SET/NAME.svg``)."""
    import material

    return Path(material.__file__).parent / "templates" / ".icons"


def _icon_problem(name: Any) -> str | None:
    """Why ``name`` is not one of the theme's icons (``material/github``), or None."""
    if not isinstance(name, str) or not re.fullmatch(r"[a-z0-9-]+(?:/[a-z0-9-]+)+", name):
        return f"{name!r} is not an icon name (set/name)"
    return None if (_theme_icons() / f"{name}.svg").is_file() else f"{name!r} is not one of the theme's icons"


def _strings(value: Any) -> Iterator[Any]:
    """The leaves of a nested mapping (``theme.icon``: a name, or a mapping of names)."""
    if isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    else:
        yield value


def _theme_problems(theme: dict[str, Any]) -> Iterator[str]:
    """The theme's values: a language and features of its own, no fonts (they load from another host), a palette
    of its colours and schemes, its own icons, and the site's own logo and favicon."""
    if "language" in theme and str(theme["language"]) not in _theme_languages():
        yield f"theme language {theme['language']!r} is not one of the theme's languages"
    features = theme.get("features") or []
    for feature in features if isinstance(features, list) else [features]:
        if feature not in _FEATURES:
            yield f"theme feature {feature!r} is not one of the theme's features"
    if "font" in theme and theme["font"] is not False:
        yield "theme font must be false: any font is loaded from another host by every reader's browser"
    palettes = theme.get("palette")
    for palette in palettes if isinstance(palettes, list) else [palettes] if palettes is not None else []:
        if not isinstance(palette, dict):
            yield "theme palette: each entry is a mapping of scheme, primary, accent, toggle, media"
            continue
        yield from (f"theme palette setting {k!r} is not allowed" for k in palette if k not in _PALETTE_KEYS)
        if palette.get("scheme", "default") not in ("default", "slate"):
            yield f"theme palette scheme {palette['scheme']!r} is not default or slate"
        for key in ("primary", "accent"):
            if key in palette and palette[key] not in _COLORS:
                yield f"theme palette {key} {palette[key]!r} is not one of the theme's colours"
        toggle = palette.get("toggle") or {}
        if not isinstance(toggle, dict):
            yield "theme palette toggle is a mapping of icon and name"
        else:
            if "icon" in toggle and (why := _icon_problem(toggle["icon"])):
                yield f"theme palette toggle icon: {why}"
            if "name" in toggle and (why := text_problem(str(toggle["name"]))):
                yield f"theme palette toggle name: {why}"
        if "media" in palette and (why := text_problem(str(palette["media"]))):
            yield f"theme palette media: {why}"
    for name in _strings(theme.get("icon")) if "icon" in theme else ():
        if why := _icon_problem(name):
            yield f"theme icon: {why}"
    for key in ("logo", "favicon"):
        if key in theme and (why := url_problem(str(theme[key]), frozenset())):
            yield f"theme {key}: {why}"


def _value_problems(config: dict[str, Any]) -> Iterator[str]:
    """Why values of an allowed configuration could break a page or the build: shown text that is not plain, an
    address that is not ``https:`` or relative, a theme or search option outside its enumeration."""
    for key in _SHOWN_SETTINGS:
        if key in config and (why := text_problem(str(config[key]))):
            yield f"{key}: {why}"
    for key in _URL_SETTINGS:
        if key in config and config[key] is not None and (why := url_problem(str(config[key]))):
            yield f"{key}: {why}"
    for pointer, title, target in _nav_entries(config.get("nav"), "/nav"):
        if why := text_problem(title):
            yield f"nav title at {pointer}: {why}"
        if target is not None and (why := url_problem(target)):
            yield f"nav target {target!r} at {pointer}: {why}"
    if config.get("repo_url"):
        yield "repo_url: the theme's script asks the repository's host about it from every reader's browser"
    theme = config.get("theme")
    if isinstance(theme, dict):
        yield from _theme_problems(theme)
    for item in config.get("plugins") or []:
        options = next(iter(item.values())) if isinstance(item, dict) else None
        for option in options if isinstance(options, dict) else {}:
            if option not in _SEARCH_OPTIONS:
                yield f"search option {option!r} is not allowed (allowed: {', '.join(sorted(_SEARCH_OPTIONS))})"
        separator = options.get("separator") if isinstance(options, dict) else None
        if separator is not None:
            try:
                re.compile(str(separator))
            except re.error as exc:
                yield f"search separator is not a regular expression: {exc}"


def load(root: Path, **overrides: Any) -> Any:
    """``mkdocs.yml`` loaded and validated as MkDocs loads it for a build (``overrides`` such as ``site_dir``).
    Raises ``ConfigProblem`` with MkDocs' own message when it would not load."""
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort, ConfigurationError

    try:
        return load_config(str(root / SITE_CONFIG), **overrides)
    except (ConfigurationError, Abort) as exc:
        raise ConfigProblem(f"MkDocs would not load it: {exc}") from None


class ConfigProblem(Exception):
    """``mkdocs.yml`` as MkDocs would refuse it."""


def _load_problems(root: Path) -> list[str]:
    """Why MkDocs would refuse the configuration at build (loaded as the build loads it), or nothing."""
    import logging

    said: list[str] = []

    class Said(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(record.getMessage())

    logger, handler = logging.getLogger("mkdocs"), Said(logging.ERROR)
    propagate, logger.propagate = logger.propagate, False  # what MkDocs says is the finding, not printed
    logger.addHandler(handler)
    try:
        load(root)
    except ConfigProblem as exc:
        return ["; ".join(said) or str(exc)]
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
    return []


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
        why = outside_repository(str(css)) or url_problem(str(css), frozenset())
        if why:
            out.append(f"extra_css {css!r}: {why}")
    out += _value_problems(config)
    return out or _load_problems(root)


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
    for at, title, _target in _nav_entries(nav, pointer):
        yield at, title


def _nav_entries(nav: Any, pointer: str) -> Iterator[tuple[str, str, str | None]]:
    """(JSON pointer, title, target) of every titled entry of a MkDocs ``nav`` (a section's target is None), and
    ("", target) of every untitled page."""
    for i, item in enumerate(nav if isinstance(nav, list) else []):
        if isinstance(item, str):
            yield f"{pointer}/{i}", "", item
        for title, value in item.items() if isinstance(item, dict) else []:
            at = pointer + join_pointer(i, str(title))
            yield at, str(title), value if isinstance(value, str) else None
            yield from _nav_entries(value, at)


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
    if isinstance(value, dict):  # MkDocs takes a mapping of names to options too
        return [{name: opts} for name, opts in value.items()]
    return value if isinstance(value, list) else []
