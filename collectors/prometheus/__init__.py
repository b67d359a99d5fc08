"""Prometheus, both ways: the exposition of what gpuscope measures (collect --serve / --textfile)
and the reading of a past job back from a site's Prometheus (query_range, TOML metric maps)."""
