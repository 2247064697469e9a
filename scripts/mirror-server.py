#!/usr/bin/env python3
"""A static web server for `gpuvalue catalog update --mirror`, over a folder laid out by host
(`raw.githubusercontent.com/...`, `prices.azure.com/...`), that also answers by query: a
request for PATH?QUERY is served from the file `PATH@QUERY` (with `$` dropped: no `?` or `$`
in file names) where one exists, else from PATH. Plain static servers ignore the query, so
they cannot mirror a paged API such as Azure's Retail Prices.

usage: mirror-server.py FOLDER [PORT]   (binds 127.0.0.1; PORT 0 picks a free one, printed)
"""
import http.server, os, sys, urllib.parse


class Handler(http.server.SimpleHTTPRequestHandler):
    def translate_path(self, path):
        plain = super().translate_path(path)
        query = urllib.parse.urlsplit(path).query
        if query:
            named = plain + "@" + urllib.parse.unquote(query).replace("$", "")
            if os.path.isfile(named):
                return named
            named = plain + "@" + query.replace("$", "")
            if os.path.isfile(named) or os.path.isdir(plain):
                # An API call on a folder (`https://host/?Action=...`) without its answer
                # is not found, not a folder listing.
                return named
        return plain

    def log_message(self, *args):
        pass


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[-1])
    folder, port = sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 0
    handler = lambda *a, **k: Handler(*a, directory=folder, **k)
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as s:
        print(f"serving {folder} on http://127.0.0.1:{s.server_address[1]}", flush=True)
        s.serve_forever()


main()
