"""The ingest stage's SQL (``events_boots``, ``events_anchored``, ``classified_events``);
loaded by ``pipeline.ingest.ruletable.sql``."""
