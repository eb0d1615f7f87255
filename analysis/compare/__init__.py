"""Stage 4, comparing sets: launches matched across sets and metrics diffed against the
noise (:mod:`analysis.compare.diff`), one-sided rows explained by version
(:mod:`analysis.compare.renames`), and the headline figure."""
