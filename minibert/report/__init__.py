"""The one report engine: a grid's finished runs as one tidy table, and pages rendered from it."""
