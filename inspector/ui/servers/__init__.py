"""Servers in the window:

- `connection`: `Connection`, the Qt face of one `ServerSession` (its callbacks as signals);
- `sidebar`: `ServerModel`, `ServerSidebar` (`serverList`, the status card);
- `add_dialog`: `AddServerDialog`, `guess_name`, `describe_spec`;
- `info`, `extras`: `ServerInfoView` (with ping, extensions, cacheable results) and `RootsEditor`;
- `log_pane`, `log_controls`: the Log dock (`serverLog`, level and logger filters);
- `catalog_link`: `CatalogLink` (what is saved), `demo_spec`, `DEMO_NAME`, `MemoryCatalog`;
- `import_dialog`: `ImportDialog`, the preview of an import.
"""

__all__ = ["add_dialog", "catalog_link", "connection", "extras", "import_dialog", "info", "log_controls",
           "log_pane", "sidebar"]
