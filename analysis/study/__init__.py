"""Stage 3, the study: the claims and kernel tables of a set, its figures and their style,
the static SASS table and the quantization error."""
