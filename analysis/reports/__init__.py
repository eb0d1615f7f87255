"""Stage 2, reading: Nsight Compute reports into tidy tables (:mod:`analysis.reports.ncu` is
the reader, :mod:`analysis.reports.parse` reads a set), imports of other people's reports,
the files of a profile set, the tables' schemas and the per-set tables (the summary and the
per-metric table comparisons read)."""
