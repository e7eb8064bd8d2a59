"""The dashboard: `benchdb dashboard` (a read-only local web app over the warehouse) and `benchdb site`
(the same pages as static files with their data, for any static host).

- :mod:`.api`: the views a page can ask for, each a SQL file in ``benchdb/sql/dashboard/`` with
  the URL filters it takes, run on a read-only, sandboxed connection.
- :mod:`.server`: the HTTP server (GET only; a connection per request, so data ingested while it
  runs appears on the next load).
- :mod:`.site`: the static export (``data/<view>.json``; the page filters in the browser).
- ``static/``: the page itself, plain HTML, CSS and JavaScript with no build step; every filter is
  in the URL, so a link reproduces the view.
"""
