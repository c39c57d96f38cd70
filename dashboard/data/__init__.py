"""The data floor, in wings whose imports point one way:

    names      names and limits every wing shares (relidash.toml, the cache root, limits)
    sources    where report files are: a directory walk and its watch, object storage and
               its mirror
    catalog    the DuckDB file: open, schema, named queries, problems, seed catalogs
    formats    one package per harness behind one protocol (formats/protocol.py)
    load       harness-neutral loading: what changed, batches, releases, results, the
               served catalog, one case read back
    records    sign-offs and their ledger: data, not cache

A wing imports only the wings before it (tests/test_layers.py). No Streamlit, no Altair,
no statistics here.
"""
