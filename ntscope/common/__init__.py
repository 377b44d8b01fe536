"""ntscope.common: what the front door (ntscope/*.py), sql/ and reports/ all need, below all of
them: errors, files read whole, run layout, converted files and their checksums, where a
command may write, atomic outputs, the converter binary, the cache folder, processes, bench
records. It imports nothing of ntscope but itself (ntscope/tests/test_layers.py checks)."""
