"""A grid's results as tables: written from its finished runs, read back, queried, and held to the family of
questions it declared before its runs. Below both the report engine (`minibert.report`: pages and dashboards)
and the sequential comparisons (`minibert.compare`), which read the same tables."""
