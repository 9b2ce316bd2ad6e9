"""MkDocs hooks (mkdocs.yml ``hooks:``). A thin file: MkDocs loads it by path,
so the state lives in ``registry.sitebuild``, imported once."""

from registry.sitebuild import on_files, on_page_content, on_page_markdown, on_post_build

__all__ = ["on_files", "on_page_content", "on_page_markdown", "on_post_build"]
